// The reaper deletes keys past their retention, in small batches that never block live traffic:
// FOR UPDATE SKIP LOCKED passes over any row a request holds, and each batch is its own statement
// and transaction. Rows past retention are already treated as absent by the protocol, so the
// reaper only reclaims space; it is never needed for correctness.
import type { SqlRunner } from "../store/postgres.js";
import { JobLock, lockedBatchDelete, type LockedResult } from "./lock.js";

/** Small enough that one batch holds its row locks for a few milliseconds. */
export const REAPER_BATCH_SIZE = 500;
/** Bounds one round, so a backlog is worked off over several rounds instead of one long one. */
export const REAPER_MAX_BATCHES = 20;

export interface ReaperResult {
  /** false when another instance held the reaper's lock and this round did nothing. */
  ran: boolean;
  deleted: number;
  batches: number;
}

const DELETE_BATCH = lockedBatchDelete(
  `SELECT "id" FROM "IdempotencyKey" WHERE (SELECT "locked" FROM "lock") AND "expiresAt" <= now()
   ORDER BY "expiresAt" LIMIT $2 FOR UPDATE SKIP LOCKED`,
  `k."expiresAt" <= now()`,
  `1 AS "one"`,
);

export async function reapExpiredKeys(run: SqlRunner, options: { batchSize?: number; maxBatches?: number } = {}): Promise<ReaperResult> {
  const batchSize = options.batchSize ?? REAPER_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? REAPER_MAX_BATCHES;
  let deleted = 0;
  let batches = 0;
  while (batches < maxBatches) {
    const [result] = await run.query<LockedResult<unknown>>(DELETE_BATCH, [JobLock.REAPER, batchSize]);
    if (!result?.locked) return { ran: batches > 0, deleted, batches };
    batches++;
    deleted += result.rows.length;
    if (result.rows.length < batchSize) break;
  }
  return { ran: true, deleted, batches };
}
