// The reaper deletes keys past their retention, in small batches that never block live traffic:
// FOR UPDATE SKIP LOCKED passes over any row a request holds, and each batch is its own statement
// and transaction. Rows past retention are already treated as absent by the protocol, so the
// reaper only reclaims space; it is never needed for correctness, but a reaper that falls behind
// lets the table grow without bound, so a round works until it is caught up (within a time
// budget) and its lag is measured (reaperLagSeconds) for metrics and a warning.
import type { SqlRunner } from "../store/postgres.js";
import { JobLock, lockedBatchDelete, type LockedResult } from "./lock.js";

/** Small enough that one batch holds its row locks for a few milliseconds. */
export const REAPER_BATCH_SIZE = 500;
/**
 * A round ends when it is caught up or after this long, so one instance's reaper never occupies
 * a pool connection for minutes; the scheduler starts the next round at once while behind.
 */
export const REAPER_ROUND_BUDGET_MS = 10_000;
/**
 * Between batches the reaper yields this long: the connection goes back to the pool, and
 * requests queued for it go first. 5 ms against a batch of ~10–30 ms keeps the reaper at well
 * under one connection's worth of the database while deleting tens of thousands of keys a second.
 */
export const REAPER_BATCH_PAUSE_MS = 5;

export interface ReaperResult {
  /** false when another instance held the reaper's lock and this round did nothing. */
  ran: boolean;
  deleted: number;
  batches: number;
  /** true when the last batch found fewer expired keys than it could take: nothing left behind. */
  caughtUp: boolean;
}

export interface ReaperOptions {
  batchSize?: number;
  budgetMs?: number;
  pauseMs?: number;
}

const DELETE_BATCH = lockedBatchDelete(
  `SELECT "id" FROM "IdempotencyKey" WHERE (SELECT "locked" FROM "lock") AND "expiresAt" <= now()
   ORDER BY "expiresAt" LIMIT $2 FOR UPDATE SKIP LOCKED`,
  `k."expiresAt" <= now()`,
  `1 AS "one"`,
);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function reapExpiredKeys(
  run: SqlRunner,
  options: ReaperOptions = {},
): Promise<ReaperResult> {
  const batchSize = options.batchSize ?? REAPER_BATCH_SIZE;
  const budgetMs = options.budgetMs ?? REAPER_ROUND_BUDGET_MS;
  const pauseMs = options.pauseMs ?? REAPER_BATCH_PAUSE_MS;
  const started = Date.now();
  let deleted = 0;
  let batches = 0;
  for (;;) {
    const [result] = await run.query<LockedResult<unknown>>(DELETE_BATCH, [
      JobLock.REAPER,
      batchSize,
    ]);
    if (!result?.locked) return { ran: batches > 0, deleted, batches, caughtUp: batches > 0 };
    batches++;
    deleted += result.rows.length;
    if (result.rows.length < batchSize) return { ran: true, deleted, batches, caughtUp: true };
    if (Date.now() - started >= budgetMs) return { ran: true, deleted, batches, caughtUp: false };
    if (pauseMs > 0) await pause(pauseMs);
  }
}

/**
 * How far behind retention the table is: the age, in seconds, of the oldest key past its
 * retention (0 when there is none). One read of the expiresAt index's first entries.
 */
export async function reaperLagSeconds(run: SqlRunner): Promise<number> {
  const [row] = await run.query<{ lag: number }>(
    `SELECT coalesce(extract(epoch FROM now() - min("expiresAt")), 0)::float8 AS "lag" FROM "IdempotencyKey" WHERE "expiresAt" <= now()`,
    [],
  );
  return Math.max(0, row?.lag ?? 0);
}
