// The sweeper releases keys whose lease expired long ago. Safe because completion commits with the
// business write: a key still PROCESSING has no committed effect, so deleting it lets the client's
// retry run anew. A retry would take such a key over by itself; the sweeper frees keys of clients
// that never come back, and clears them out of the dashboard's "stuck" list.
import type { PrismaClient } from "../../../generated/prisma/client";
import { JobLock, withJobLock } from "./advisory-lock";

/**
 * "Long ago": five minutes past the lease end. Far beyond any lease (30 s by default), so the
 * sweeper never races a request that merely ran late, while an operator still sees the stuck key
 * in the dashboard for a while first.
 */
export const SWEEPER_GRACE_SECONDS = 300;
export const SWEEPER_BATCH_SIZE = 500;

export interface SweeperResult {
  ran: boolean;
  released: number;
  keys: { scope: string; key: string; procedure: string }[];
}

export async function sweepStuckKeys(db: PrismaClient, options: { graceSeconds?: number; batchSize?: number } = {}): Promise<SweeperResult> {
  const grace = options.graceSeconds ?? SWEEPER_GRACE_SECONDS;
  const batchSize = options.batchSize ?? SWEEPER_BATCH_SIZE;
  const keys = await withJobLock(db, JobLock.SWEEPER, (tx) =>
    tx.$queryRaw<{ scope: string; key: string; procedure: string }[]>`
      DELETE FROM "IdempotencyKey" WHERE "id" IN (
        SELECT "id" FROM "IdempotencyKey"
        WHERE "status" = 'PROCESSING' AND "leaseExpiresAt" < now() - make_interval(secs => ${grace}::float8)
        ORDER BY "leaseExpiresAt" LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )
      AND "status" = 'PROCESSING' AND "leaseExpiresAt" < now() - make_interval(secs => ${grace}::float8)
      RETURNING "scope", "key", "procedure"`,
  );
  return keys ? { ran: true, released: keys.length, keys } : { ran: false, released: 0, keys: [] };
}
