// The sweeper releases keys whose lease expired long ago. Safe because completion commits with the
// business write: a key still PROCESSING has no committed effect, so deleting it lets the client's
// retry run anew. A retry would take such a key over by itself; the sweeper frees keys of clients
// that never come back, and clears them out of the dashboard's "stuck" list.
import type { SqlRunner } from "../store/postgres.js";
import { JobLock, lockedBatchDelete, type LockedResult } from "./lock.js";

/**
 * "Long ago": five minutes past the lease end. Far beyond any lease (30 s by default), so the
 * sweeper never races a request that merely ran late, while an operator still sees the stuck key
 * in the dashboard for a while first.
 */
export const SWEEPER_GRACE_SECONDS = 300;
export const SWEEPER_BATCH_SIZE = 500;

export interface SweptKey {
  scope: string;
  key: string;
  procedure: string;
}

export interface SweeperResult {
  ran: boolean;
  released: number;
  keys: SweptKey[];
}

const stuckFor = (table: string) =>
  `${table}"status" = 'PROCESSING' AND ${table}"leaseExpiresAt" < now() - make_interval(secs => $2::float8)`;
const SWEEP = lockedBatchDelete(
  `SELECT "id" FROM "IdempotencyKey" WHERE (SELECT "locked" FROM "lock") AND ${stuckFor("")}
   ORDER BY "leaseExpiresAt" LIMIT $3 FOR UPDATE SKIP LOCKED`,
  stuckFor("k."),
  `k."scope", k."key", k."procedure"`,
);

export async function sweepStuckKeys(
  run: SqlRunner,
  options: { graceSeconds?: number; batchSize?: number } = {},
): Promise<SweeperResult> {
  const grace = options.graceSeconds ?? SWEEPER_GRACE_SECONDS;
  const batchSize = options.batchSize ?? SWEEPER_BATCH_SIZE;
  const [result] = await run.query<LockedResult<SweptKey>>(SWEEP, [
    JobLock.SWEEPER,
    grace,
    batchSize,
  ]);
  if (!result?.locked) return { ran: false, released: 0, keys: [] };
  return { ran: true, released: result.rows.length, keys: result.rows };
}
