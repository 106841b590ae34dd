// Keys by status and stuck leases, for the dashboard and /api/metrics. An exact count by status
// reads every row (seconds at 10 million keys: bench:admin), so past EXACT_COUNT_UP_TO rows the
// finished statuses are the planner's estimate (from the last ANALYZE); PROCESSING and stuck stay
// exact, read from the (status, leaseExpiresAt) index.
import { Prisma } from "@/generated/prisma/client";
import type { KeyStatus } from "@once/idempotency/operator";
import { STUCK, type Queryable } from "./keys-query";

/** Up to a million rows an exact count costs ~100 ms here; past it, estimates. */
const EXACT_COUNT_UP_TO = 1_000_000;

export async function keyGauges(db: Queryable, exactUpTo = EXACT_COUNT_UP_TO) {
  const [size] = await db.$queryRaw<{ rows: number }[]>(
    Prisma.sql`SELECT reltuples::float8 AS "rows" FROM pg_class WHERE oid = '"IdempotencyKey"'::regclass`,
  );
  const estimated = (size?.rows ?? -1) > exactUpTo; // -1: never analyzed, so small
  const byStatus: Record<KeyStatus, number> = { PROCESSING: 0, COMPLETED: 0, FAILED: 0 };
  const counts = estimated
    ? Prisma.sql`
      SELECT u."status", round(u."freq" * ${size!.rows})::int AS "n"
      FROM pg_stats, unnest("most_common_vals"::text::text[], "most_common_freqs") AS u("status", "freq")
      WHERE "schemaname" = current_schema() AND "tablename" = 'IdempotencyKey' AND "attname" = 'status' AND u."status" <> 'PROCESSING'
      UNION ALL
      SELECT 'PROCESSING', count(*)::int FROM "IdempotencyKey" WHERE "status" = 'PROCESSING'`
    : Prisma.sql`SELECT "status"::text AS "status", count(*)::int AS "n" FROM "IdempotencyKey" GROUP BY "status"`;
  const [rows, stuckRows] = await Promise.all([
    db.$queryRaw<{ status: KeyStatus; n: number }[]>(counts),
    db.$queryRaw<{ n: number }[]>(
      Prisma.sql`SELECT count(*)::int AS "n" FROM "IdempotencyKey" WHERE ${STUCK}`,
    ),
  ]);
  for (const r of rows) byStatus[r.status] = r.n;
  // estimated: COMPLETED and FAILED are the planner's estimates.
  return { byStatus, stuck: stuckRows[0]?.n ?? 0, estimated };
}
