// The dashboard's reads of the key table: list, read one, flushed counters. Every judgement about
// a lease uses the database's `now()`; each list filter has an index that serves it.
import { Prisma } from "@/generated/prisma/client";
import type { KeyStatus } from "@once/idempotency/operator";

/** live: a request holds the key; expired: PROCESSING, its holder gone (stuck); none: finished. */
export const LeaseState = { LIVE: "live", EXPIRED: "expired", NONE: "none" } as const;
export type LeaseState = (typeof LeaseState)[keyof typeof LeaseState];

export type Queryable = Pick<Prisma.TransactionClient, "$queryRaw">;

/** What an operator typed as the start of a LIKE pattern: `%`, `_` and `\` matched literally. */
export const likePrefix = (value: string) => `${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export interface KeyListFilters {
  status?: KeyStatus;
  /** The key's scope: a tenant id, "admin", or "provider:<name>". */
  scope?: string;
  /** The start of the procedure's name: "checkout." finds checkout.placeOrder. */
  procedurePrefix?: string;
  /** PROCESSING keys whose lease has expired. */
  stuck?: boolean;
}

type KeyCursor = { createdAt: Date; id: string };

export interface KeyListRow {
  id: string;
  scope: string;
  key: string;
  procedure: string;
  status: KeyStatus;
  attempts: number;
  leaseState: LeaseState;
  leaseExpiresAt: Date | null;
  leaseRemainingMs: number | null;
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
  dbNow: Date;
}

const LEASE_STATE = Prisma.sql`CASE WHEN "status" <> 'PROCESSING' THEN 'none'
  WHEN "leaseExpiresAt" > now() THEN 'live' ELSE 'expired' END AS "leaseState",
  (EXTRACT(EPOCH FROM ("leaseExpiresAt" - now())) * 1000)::float8 AS "leaseRemainingMs"`;

export const LIST_COLUMNS = Prisma.sql`"id"::text AS "id", "scope", "key", "procedure", "status"::text AS "status", "attempts",
  ${LEASE_STATE}, "leaseExpiresAt", "createdAt", "completedAt", "expiresAt", "responseStatus"`;

/** The stuck condition, written once: PROCESSING and its lease over by the database's clock. */
export const STUCK = Prisma.sql`("status" = 'PROCESSING' AND "leaseExpiresAt" <= now())`;

/** The WHERE conditions of the filters (shared by the list and the bulk release). */
export function filterConditions(filters: KeyListFilters): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (filters.status) where.push(Prisma.sql`"status" = ${filters.status}::"IdempotencyStatus"`);
  if (filters.scope) where.push(Prisma.sql`"scope" = ${filters.scope}`);
  if (filters.procedurePrefix)
    where.push(Prisma.sql`"procedure" LIKE ${likePrefix(filters.procedurePrefix)}`);
  if (filters.stuck) where.push(STUCK);
  return where;
}

/**
 * Newest first, keyset-paginated on (createdAt, id). Indexes:
 * - none, or a common procedure prefix: IdempotencyKey_createdAt_id_idx, read in page order;
 * - status / scope: (status|scope, createdAt DESC, id DESC), read in page order;
 * - a rare procedure prefix: IdempotencyKey_procedure_idx (text_pattern_ops) as a range, then a
 *   top-N sort of the few rows it finds;
 * - stuck: IdempotencyKey_stuck_page_idx, in two steps (below).
 * The row comparison `("createdAt", "id") < (…, …)` lets PostgreSQL start the scan at the cursor.
 */
export function keyListQuery(
  filters: KeyListFilters,
  cursor: KeyCursor | null,
  limit: number,
): Prisma.Sql {
  const where = filterConditions(filters);
  if (cursor)
    where.push(
      Prisma.sql`("createdAt", "id") < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)`,
    );
  const whereSql = where.length ? Prisma.sql`WHERE ${Prisma.join(where, " AND ")}` : Prisma.empty;
  const page = Prisma.sql`ORDER BY "createdAt" DESC, "id" DESC`;
  if (filters.stuck) {
    // Every column the stuck filters and the page order read is in the stuck index, so the page's
    // ids come from an index-only scan and only the rows shown are read from the table. In one
    // step PostgreSQL fetched each stuck row before rejecting it: 1.4 s at 150 000 stuck keys
    // with a procedure prefix that matched none (docs/scale.md).
    return Prisma.sql`SELECT ${LIST_COLUMNS} FROM "IdempotencyKey"
      WHERE "id" IN (SELECT "id" FROM "IdempotencyKey" ${whereSql} ${page} LIMIT ${limit}) ${page}`;
  }
  return Prisma.sql`SELECT ${LIST_COLUMNS} FROM "IdempotencyKey" ${whereSql} ${page} LIMIT ${limit}`;
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
  const last = rows.length > limit ? items.at(-1) : undefined;
  return { items, nextCursor: last ? { createdAt: last.createdAt, id: last.id } : null };
}

const DETAIL_COLUMNS = Prisma.sql`${LIST_COLUMNS}, "fingerprint", "leaseToken"::text AS "leaseToken", "updatedAt",
  "responseBody", "responseContentType", now() AS "dbNow"`;

export async function readKeyById(db: Queryable, id: string): Promise<KeyDetailRow | null> {
  const rows = await db.$queryRaw<KeyDetailRow[]>(
    Prisma.sql`SELECT ${DETAIL_COLUMNS} FROM "IdempotencyKey" WHERE "id" = ${id}::uuid`,
  );
  return rows[0] ?? null;
}

export interface CounterRow {
  scope: string;
  procedure: string;
  event: string;
  count: number;
}

/** Every instance's flushed counters (the table is cluster-wide). */
export async function readCounters(db: Queryable): Promise<CounterRow[]> {
  return db.$queryRaw<CounterRow[]>(Prisma.sql`
    SELECT "scope", "procedure", "event", "count"::float8 AS "count" FROM "IdempotencyCounter"
    ORDER BY "scope", "procedure", "event"`);
}
