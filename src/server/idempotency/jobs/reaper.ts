// The reaper deletes keys past their retention, in small batches that never block live traffic:
// FOR UPDATE SKIP LOCKED passes over any row a request holds, and each batch is its own short
// statement (and, given the pg pool, its own transaction). Rows past retention are already treated as absent by the protocol, so the reaper only
// reclaims space; it is never needed for correctness.
import type pg from "pg";
import type { PrismaClient } from "../../../generated/prisma/client";
import { JobLock, withJobLock, withSessionJobLock } from "./advisory-lock";

/** Small enough that one batch holds its locks for a few milliseconds. */
export const REAPER_BATCH_SIZE = 500;
/** Bounds one round, so a backlog is worked off over several rounds instead of one long one. */
export const REAPER_MAX_BATCHES = 20;

export interface ReaperResult {
  /** false when another instance held the reaper's lock and this round did nothing. */
  ran: boolean;
  deleted: number;
  batches: number;
}

const DELETE_BATCH = `
  DELETE FROM "IdempotencyKey" WHERE "id" IN (
    SELECT "id" FROM "IdempotencyKey" WHERE "expiresAt" <= now()
    ORDER BY "expiresAt" LIMIT $1 FOR UPDATE SKIP LOCKED
  )`;

/**
 * With `pool` (the pg pool under Prisma's adapter), each batch commits on its own while a session
 * lock keeps other reapers out: a batch holds its row locks for milliseconds. Without it, the
 * round runs in one Prisma transaction, so its deletions stay locked until the round ends.
 */
export async function reapExpiredKeys(
  db: PrismaClient,
  options: {
    pool?: pg.Pool;
    batchSize?: number;
    maxBatches?: number;
    /** Called after each batch, inside the round (tests use it to hold a round open). */
    afterBatch?: (deleted: number) => Promise<void>;
  } = {},
): Promise<ReaperResult> {
  const batchSize = options.batchSize ?? REAPER_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? REAPER_MAX_BATCHES;
  const round = async (deleteBatch: () => Promise<number>) => {
    let deleted = 0;
    let batches = 0;
    while (batches < maxBatches) {
      const n = await deleteBatch();
      batches++;
      deleted += n;
      await options.afterBatch?.(n);
      if (n < batchSize) break;
    }
    return { deleted, batches };
  };
  const result = options.pool
    ? await withSessionJobLock(options.pool, JobLock.REAPER, (client) =>
        round(async () => (await client.query(DELETE_BATCH, [batchSize])).rowCount ?? 0),
      )
    : await withJobLock(db, JobLock.REAPER, (tx) => round(() => tx.$executeRawUnsafe(DELETE_BATCH, batchSize)));
  return result ? { ran: true, ...result } : { ran: false, deleted: 0, batches: 0 };
}
