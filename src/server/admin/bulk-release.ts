// Releasing many stuck leases at once (an instance died holding 2 000 of them): one bounded batch
// per call, selected by the dashboard's filters. The DELETE re-checks "still stuck" on each row
// itself, the same guard the engine's removeKey uses: a key a retry took over meanwhile has a live
// lease by then and is left alone. Under READ COMMITTED a row another transaction is changing is
// skipped by the sub-select (SKIP LOCKED) rather than waited for; a row that changed and committed
// before the DELETE reached it is re-evaluated against the guard.
import { Prisma } from "@/generated/prisma/client";
import { filterConditions, STUCK, type KeyListFilters, type Queryable } from "./keys-query";

/** Keys per call: one short transaction (≈ 50 ms at 500), so a release never holds locks for long. */
export const BULK_RELEASE_BATCH = 500;

export interface ReleasedKey {
  id: string;
  scope: string;
  key: string;
  procedure: string;
  fingerprint: string;
  attempts: number;
  createdAt: Date;
  leaseExpiresAt: Date | null;
  expiresAt: Date;
}

export type StuckFilters = Pick<KeyListFilters, "scope" | "procedurePrefix">;

/** Deletes up to `limit` stuck keys matching `filters`, oldest lease first; returns what it deleted. */
export async function releaseStuckBatch(tx: Queryable, filters: StuckFilters, limit: number): Promise<ReleasedKey[]> {
  const where = Prisma.join([...filterConditions({ ...filters, stuck: true })], " AND ");
  // The batch is chosen once, in a MATERIALIZED CTE. Written as `WHERE "id" IN (SELECT … LIMIT n
  // FOR UPDATE SKIP LOCKED)`, the planner may rescan the sub-select for each row it deletes, and a
  // rescan skips the rows this statement already deleted and returns the next ones: measured here,
  // 505 rows deleted with LIMIT 500.
  return tx.$queryRaw<ReleasedKey[]>(Prisma.sql`
    WITH "batch" AS MATERIALIZED (
      SELECT "id" FROM "IdempotencyKey" WHERE ${where}
      ORDER BY "leaseExpiresAt", "id" LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    DELETE FROM "IdempotencyKey" AS k USING "batch" WHERE k."id" = "batch"."id" AND ${STUCK}
    RETURNING k."id"::text AS "id", k."scope", k."key", k."procedure", k."fingerprint", k."attempts", k."createdAt",
      k."leaseExpiresAt", k."expiresAt"`);
}

/** How many stuck keys the filters still select (the stuck set is small: served by its index). */
export async function countStuck(db: Queryable, filters: StuckFilters): Promise<number> {
  const where = Prisma.join(filterConditions({ ...filters, stuck: true }), " AND ");
  const rows = await db.$queryRaw<{ n: number }[]>(Prisma.sql`SELECT count(*)::int AS "n" FROM "IdempotencyKey" WHERE ${where}`);
  return rows[0]?.n ?? 0;
}
