// The reaper deletes keys past their retention, in small batches that never block live traffic:
// FOR UPDATE SKIP LOCKED passes over any row a request holds, and each batch is its own short
// statement. Rows past retention are already treated as absent by the protocol, so the reaper only
// reclaims space; it is never needed for correctness.
import type { PrismaClient } from "../../../generated/prisma/client";
import { JobLock, withJobLock } from "./advisory-lock";

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

export async function reapExpiredKeys(
  db: PrismaClient,
  options: {
    batchSize?: number;
    maxBatches?: number;
    /** Called after each batch, inside the round (tests use it to hold a round open). */
    afterBatch?: (deleted: number) => Promise<void>;
  } = {},
): Promise<ReaperResult> {
  const batchSize = options.batchSize ?? REAPER_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? REAPER_MAX_BATCHES;
  const result = await withJobLock(db, JobLock.REAPER, async (tx) => {
    let deleted = 0;
    let batches = 0;
    while (batches < maxBatches) {
      const n = await tx.$executeRaw`
        DELETE FROM "IdempotencyKey" WHERE "id" IN (
          SELECT "id" FROM "IdempotencyKey" WHERE "expiresAt" <= now()
          ORDER BY "expiresAt" LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
        )`;
      batches++;
      deleted += n;
      await options.afterBatch?.(n);
      if (n < batchSize) break;
    }
    return { deleted, batches };
  });
  return result ? { ran: true, ...result } : { ran: false, deleted: 0, batches: 0 };
}
