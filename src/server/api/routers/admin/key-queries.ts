// The dashboard's reads of the idempotency keys: lists, a key's detail, gauges and counters.
// (Bust and release are the engine's own: @once/idempotency's removeKey.)
import type { KeyStatus, LeaseState } from "@once/idempotency";
import { Prisma } from "@/generated/prisma/client";
import type { Tx } from "@/server/db/client";

type Queryable = Pick<Tx, "$queryRaw">;

export interface KeyListFilters {
  status?: KeyStatus;
  /** The key's scope: a tenant id, "admin", or "provider:<name>". */
  scope?: string;
  procedure?: string;
  /** PROCESSING keys whose lease has expired. */
  stuck?: boolean;
}

export interface KeyCursor {
  createdAt: Date;
  id: string;
}

export interface KeyListRow {
  id: string;
  scope: string;
  key: string;
  procedure: string;
  status: KeyStatus;
  attempts: number;
  leaseState: LeaseState;
  leaseExpiresAt: Date | null;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
  responseStatus: number | null;
}

export interface KeyDetailRow extends KeyListRow {
  fingerprint: string;
  leaseToken: string | null;
  responseBody: string | null;
  responseContentType: string | null;
  updatedAt: Date;
  /** The database's clock when the row was read. */
  dbNow: Date;
}

const LEASE_STATE = Prisma.sql`CASE WHEN "status" <> 'PROCESSING' THEN 'none'
  WHEN "leaseExpiresAt" > now() THEN 'live' ELSE 'expired' END AS "leaseState"`;

const LIST_COLUMNS = Prisma.sql`"id", "scope", "key", "procedure", "status"::text AS "status", "attempts",
  ${LEASE_STATE}, "leaseExpiresAt", "createdAt", "completedAt", "expiresAt", "responseStatus"`;

/**
 * Newest first, keyset-paginated on (createdAt, id). Each filter has an index whose order is the
 * page order, so a page reads `limit` index entries whatever the table's size:
 * - none:      IdempotencyKey_createdAt_id_idx            (createdAt DESC, id DESC)
 * - status:    IdempotencyKey_status_createdAt_id_idx     (status, createdAt DESC, id DESC)
 * - scope:     IdempotencyKey_scope_createdAt_id_idx      (scope, createdAt DESC, id DESC)
 * - procedure: IdempotencyKey_procedure_createdAt_id_idx  (procedure, createdAt DESC, id DESC)
 * - stuck:     IdempotencyKey_status_leaseExpiresAt_idx   (status, leaseExpiresAt): the stuck set
 *              is small (the sweeper clears it), so it is found by range and then sorted.
 * The row comparison `("createdAt", "id") < (…, …)` is what lets PostgreSQL start the index scan at
 * the cursor instead of filtering from the top.
 */
export function keyListQuery(filters: KeyListFilters, cursor: KeyCursor | null, limit: number): Prisma.Sql {
  const where: Prisma.Sql[] = [];
  if (filters.status) where.push(Prisma.sql`"status" = ${filters.status}::"IdempotencyStatus"`);
  if (filters.scope) where.push(Prisma.sql`"scope" = ${filters.scope}`);
  if (filters.procedure) where.push(Prisma.sql`"procedure" = ${filters.procedure}`);
  if (filters.stuck) where.push(Prisma.sql`"status" = 'PROCESSING' AND "leaseExpiresAt" <= now()`);
  if (cursor) where.push(Prisma.sql`("createdAt", "id") < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)`);
  const whereSql = where.length ? Prisma.sql`WHERE ${Prisma.join(where, " AND ")}` : Prisma.empty;
  return Prisma.sql`SELECT ${LIST_COLUMNS} FROM "IdempotencyKey" ${whereSql}
    ORDER BY "createdAt" DESC, "id" DESC LIMIT ${limit}`;
}

export async function listKeys(
  db: Queryable,
  filters: KeyListFilters,
  cursor: KeyCursor | null,
  limit: number,
): Promise<{ items: KeyListRow[]; nextCursor: KeyCursor | null }> {
  // One more than asked: tells whether there is a next page without a count over the table.
  const rows = await db.$queryRaw<KeyListRow[]>(keyListQuery(filters, cursor, limit + 1));
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

const DETAIL_COLUMNS = Prisma.sql`"id", "scope", "key", "procedure", "fingerprint", "status"::text AS "status", "attempts",
  ${LEASE_STATE}, "leaseToken"::text AS "leaseToken", "leaseExpiresAt", "createdAt", "updatedAt", "completedAt",
  "expiresAt", "responseStatus", "responseBody", "responseContentType", now() AS "dbNow"`;

export async function readKeyById(db: Queryable, id: string): Promise<KeyDetailRow | null> {
  const rows = await db.$queryRaw<KeyDetailRow[]>`SELECT ${DETAIL_COLUMNS} FROM "IdempotencyKey" WHERE "id" = ${id}::uuid`;
  return rows[0] ?? null;
}

/** Counts for the dashboard and /api/metrics: keys by status, and stuck leases. */
export async function keyGauges(db: Queryable): Promise<{ byStatus: Record<KeyStatus, number>; stuck: number }> {
  const rows = await db.$queryRaw<{ status: KeyStatus; n: number }[]>`
    SELECT "status"::text AS "status", count(*)::int AS "n" FROM "IdempotencyKey" GROUP BY "status"`;
  const stuckRows = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS "n" FROM "IdempotencyKey" WHERE "status" = 'PROCESSING' AND "leaseExpiresAt" <= now()`;
  const byStatus: Record<KeyStatus, number> = { PROCESSING: 0, COMPLETED: 0, FAILED: 0 };
  for (const r of rows) byStatus[r.status] = r.n;
  return { byStatus, stuck: stuckRows[0]?.n ?? 0 };
}

export interface CounterRow {
  scope: string;
  procedure: string;
  event: string;
  count: number;
}

/** Every instance's flushed counters (the table is cluster-wide). */
export async function readCounters(db: Queryable): Promise<CounterRow[]> {
  return db.$queryRaw<CounterRow[]>`
    SELECT "scope", "procedure", "event", "count"::float8 AS "count" FROM "IdempotencyCounter"
    ORDER BY "scope", "procedure", "event"`;
}
