// Releasing many stuck leases at once (an instance died holding 2 000): one bounded batch per call,
// selected by the dashboard's filters. The DELETE re-checks "still stuck" on each row, as the
// engine's removeKey does: a key a retry took over meanwhile is left alone. A row another
// transaction is changing is skipped (SKIP LOCKED); one changed and committed is re-evaluated.
import { Prisma } from "@/generated/prisma/client";
import { filterConditions, STUCK, type KeyListFilters, type Queryable } from "./keys-query";
import { AuditAction } from "@/shared/audit-actions";

/** Keys per call: one short transaction (≈ 50 ms at 500), so a release holds no lock for long. */
export const BULK_RELEASE_BATCH = 500;

export interface ReleasedKey {
  id: string;
  scope: string;
  key: string;
  procedure: string;
}

export type StuckFilters = Pick<KeyListFilters, "scope" | "procedurePrefix">;

/**
 * Deletes up to `limit` stuck keys matching `filters`, oldest lease first, and writes one audit
 * entry per deleted key (what the row held, as a single release records it), in one statement:
 * the audit rows come from the DELETE's own RETURNING, so no key is released unaudited.
 */
export async function releaseStuckBatch(
  tx: Queryable,
  filters: StuckFilters,
  limit: number,
  /** Who releases, and why: one audit entry per released key. */
  audit: { actor: string; reason: string; targetType: string },
): Promise<ReleasedKey[]> {
  const where = Prisma.join(filterConditions({ ...filters, stuck: true }), " AND ");
  // The batch is chosen once, in a MATERIALIZED CTE. Written as `WHERE "id" IN (SELECT … LIMIT n
  // FOR UPDATE SKIP LOCKED)`, the planner may rescan the sub-select for each row it deletes, and a
  // rescan skips the rows this statement already deleted and returns the next ones: measured here,
  // 505 rows deleted with LIMIT 500 (on a table without statistics).
  return tx.$queryRaw<ReleasedKey[]>(Prisma.sql`
    WITH "batch" AS MATERIALIZED (
      SELECT "id" FROM "IdempotencyKey" WHERE ${where}
      ORDER BY "leaseExpiresAt", "id" LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), "released" AS (
      DELETE FROM "IdempotencyKey" AS k USING "batch" WHERE k."id" = "batch"."id" AND ${STUCK}
      RETURNING k.*
    ), "audited" AS (
      INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "targetScope", "targetKey", "reason", "details")
      SELECT ${audit.actor}, ${AuditAction.KEY_RELEASE}, ${audit.targetType}, r."id"::text, r."scope", r."key", ${audit.reason},
        jsonb_build_object('tenant', r."scope", 'key', r."key", 'procedure', r."procedure", 'status', r."status",
          'leaseState', 'expired', 'fingerprint', r."fingerprint", 'attempts', r."attempts", 'responseStatus', NULL,
          'responseBody', NULL, 'createdAt', r."createdAt", 'completedAt', NULL, 'leaseExpiresAt', r."leaseExpiresAt",
          'expiresAt', r."expiresAt", 'bulk', true)
      FROM "released" AS r
    )
    SELECT "id"::text AS "id", "scope", "key", "procedure" FROM "released"`);
}

/** How many stuck keys the filters still select (the stuck set is small: served by its index). */
export async function countStuck(db: Queryable, filters: StuckFilters): Promise<number> {
  const where = Prisma.join(filterConditions({ ...filters, stuck: true }), " AND ");
  const rows = await db.$queryRaw<{ n: number }[]>(
    Prisma.sql`SELECT count(*)::int AS "n" FROM "IdempotencyKey" WHERE ${where}`,
  );
  return rows[0]?.n ?? 0;
}
