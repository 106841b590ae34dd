// The shop's side of the books as reconciliation reads it: the orders a page of charges may belong
// to, the settled orders a run has not seen charged (a chunk at a time), the orders that share a
// checkout intent, and the sightings that say which orders a run saw charged. Every read is
// bounded: a page's orders, or a chunk.
import { Prisma } from "../generated/prisma/client";
import type { Db } from "./db";
import { chargeSubject } from "./books/finding";
import type { BookCharge, BookOrder } from "./books/judge";
import { providerKeyFor } from "./outbox-message";

/** A span of time, `until` excluded. */
export interface Range {
  from: Date;
  until: Date;
}

/** Settled orders read per statement (and looked up, one by one, before the next chunk). */
export const ORDER_CHUNK = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ORDER_COLUMNS = Prisma.sql`o."id"::text AS "id", o."tenantId", o."idempotencyKey" AS "checkoutKey", o."intentKey", o."status"::text AS "status", o."chargeId", o."totalCents", o."currency", o."createdAt", o."updatedAt"`;

type OrderRow = Omit<BookOrder, "intent"> & { intentKey: string | null; updatedAt: Date };

const toBook = ({ intentKey, updatedAt: _u, ...o }: OrderRow): BookOrder => ({
  ...o,
  intent: intentKey === null ? null : providerKeyFor(o.tenantId, intentKey),
});

/**
 * The orders `charges` may belong to (those they name, those that recorded them, and those under
 * whose key the worker found them), and the charges with the key they were found under. The worker
 * records a charge it found under an order's key and refused (another amount: an order placed
 * again with another cart took over the lost order's charge) as a finding: that is how a listed
 * charge's key is known, so it is judged as that order's.
 */
export async function ordersOf(db: Db, charges: readonly BookCharge[]) {
  if (charges.length === 0) return { orders: [], charges };
  // References are the provider's text: only those that can be an order's id are looked up.
  const ids = [...new Set(charges.map((c) => c.reference))].filter((r) => UUID.test(r));
  const rows = await db.$queryRaw<(OrderRow & { keyOf: string[] | null })[]>`
    WITH found AS (
      SELECT "chargeIds"[1] AS "chargeId", "orderId" FROM "ReconciliationFinding"
      WHERE "subject" = ANY(${charges.map((c) => chargeSubject(c.id))}) AND "details"->>'refusedBy' = 'worker')
    SELECT ${ORDER_COLUMNS}, (SELECT array_agg(f."chargeId") FROM found AS f WHERE f."orderId" = o."id"::text) AS "keyOf"
    FROM "Order" AS o
    WHERE o."id" = ANY(${ids}::uuid[]) OR o."chargeId" = ANY(${charges.map((c) => c.id)})
      OR o."id"::text IN (SELECT "orderId" FROM found)`;
  const orders = rows.map(({ keyOf: _k, ...o }) => toBook(o));
  const keys = new Map(rows.flatMap((o, i) => (o.keyOf ?? []).map((c) => [c, orders[i]!.intent])));
  return {
    orders,
    charges: charges.map((c) => (keys.get(c.id) ? { ...c, intent: keys.get(c.id)! } : c)),
  };
}

/** Which settled orders a scope judges from their side, and by which time. */
export interface OrderScope {
  by: "createdAt" | "updatedAt";
  range: Range;
  statuses: readonly ("PAID" | "PAYMENT_FAILED")[];
}

/**
 * The orders in `scope` that no run has seen charged since `seenSince`, a chunk at a time by
 * (time, id): what a run holds of them is one chunk, whatever the shop's history.
 */
export async function* unseenOrders(
  db: Db,
  scope: OrderScope,
  seenSince: Date,
): AsyncGenerator<BookOrder[]> {
  const column = Prisma.raw(`o."${scope.by}"`);
  let after: { at: Date; id: string } | undefined;
  for (;;) {
    const position = after
      ? Prisma.sql`AND (${column}, o."id") > (${after.at}, ${after.id}::uuid)`
      : Prisma.empty;
    const chunk = await db.$queryRaw<OrderRow[]>`
      SELECT ${ORDER_COLUMNS} FROM "Order" AS o LEFT JOIN "ChargeSighting" AS s ON s."orderId" = o."id"
      WHERE o."status"::text = ANY(${scope.statuses}::text[]) AND ${column} >= ${scope.range.from} AND ${column} < ${scope.range.until}
        AND (s."seenAt" IS NULL OR s."seenAt" < ${seenSince}) ${position}
      ORDER BY ${column}, o."id" LIMIT ${ORDER_CHUNK}`;
    if (chunk.length > 0) yield chunk.map(toBook);
    if (chunk.length < ORDER_CHUNK) return;
    const last = chunk.at(-1)!;
    after = { at: last[scope.by], id: last.id };
  }
}

/** Orders seen charged at `at` (a run's start): the run's order side passes them by. */
export async function recordSightings(db: Db, orderIds: readonly string[], at: Date) {
  if (orderIds.length === 0) return;
  await db.$executeRaw`
    INSERT INTO "ChargeSighting" ("orderId", "seenAt") SELECT unnest(${orderIds}::uuid[]), ${at}
    ON CONFLICT ("orderId") DO UPDATE SET "seenAt" = GREATEST("ChargeSighting"."seenAt", EXCLUDED."seenAt")`;
}

/**
 * Sightings serve the run that made them: older ones go (an hour leaves a run in progress in
 * another process its own).
 */
export async function forgetSightings(db: Db, before: Date) {
  await db.$executeRaw`DELETE FROM "ChargeSighting" WHERE "seenAt" < ${before}::timestamptz - interval '1 hour'`;
}

/** The orders of every checkout intent that an order created in `range` shares with another. */
export async function sharingOrders(db: Db, { from, until }: Range): Promise<BookOrder[]> {
  const rows = await db.$queryRaw<OrderRow[]>`
    SELECT ${ORDER_COLUMNS} FROM "Order" AS o
    WHERE (o."tenantId", o."idempotencyKey") IN (
      SELECT "tenantId", "idempotencyKey" FROM "Order" AS i
      WHERE (i."tenantId", i."idempotencyKey") IN (SELECT "tenantId", "idempotencyKey" FROM "Order" WHERE "createdAt" >= ${from} AND "createdAt" < ${until})
      GROUP BY "tenantId", "idempotencyKey" HAVING count(*) > 1)`;
  return rows.map(toBook);
}
