// The order, written by one statement: price the cart, claim the intent's order, take the stock,
// write the lines and the payment's outbox row. One prepared statement rather than three (a read
// and an insert through Prisma, then the stock): this runs on every checkout, and each statement
// through Prisma costs the server more CPU than PostgreSQL spends on it (measured, `npm run
// bench:http`'s route costs: docs/benchmarks.md). What the statement found is for the caller to
// judge (place-order.ts): an unknown product, two currencies, too little stock, an intent that
// already has its order.
import type { Tx } from "../db/client";
import type { PlacedOrder } from "./order-select";
import type { OrderLine } from "./input";

export type ClaimedOrder = Omit<PlacedOrder, "items">;

/** A cart line's product as the catalog has it at the statement. */
export interface CatalogLine {
  productId: string;
  sku: string;
  name: string;
  priceCents: number;
  currency: string;
  quantity: number;
  /** The line's stock was taken (always false when no order was inserted). */
  taken: boolean;
}

export interface OrderWrite {
  tenantId: string;
  userId: string;
  /** The checkout's Idempotency-Key: the intent, kept on the order. */
  checkoutKey: string;
  /** Merged and sorted by product id (mergeLines): one stock update per product, in lock order. */
  lines: readonly OrderLine[];
  /** The payment's outbox row; its payload is built from the order inserted. */
  outbox: { topic: string; idempotencyKey: string };
}

export interface WrittenOrder {
  /** The lines whose product exists, priced; a product missing here is unknown. */
  priced: CatalogLine[];
  /**
   * The order inserted for this intent; null if the cart cannot be ordered (an unknown product,
   * two currencies: nothing was written) or the intent already has its order (nothing written).
   */
  order: ClaimedOrder | null;
  /**
   * Every line's stock was taken, and so the lines and the outbox row written. False with an order
   * inserted means too little stock: the caller must roll the transaction back.
   */
  complete: boolean;
}

/**
 * The statement, step by step:
 * - `priced` reads the cart's products once: the order is priced at this read (a price changed by
 *   a concurrent transaction a moment later applies to the next order).
 * - `claimed` inserts the intent's order only if every product exists and all share one currency,
 *   with the total from the same read. `ON CONFLICT DO NOTHING` inserts nothing if the intent
 *   already has an order (never a failed statement, which would abort the transaction and, with
 *   @prisma/adapter-pg, cost a reconnect). It runs before any stock is touched (`locked` reads it
 *   first): a concurrent execution of the same intent waits here on the unique index until the
 *   first commits (then inserts nothing and locks nothing) or rolls back (then goes on as the
 *   first).
 * - `locked` takes the products' row locks in id order, so two carts that share products always
 *   lock them in the same sequence and cannot deadlock; only if an order was claimed.
 * - `taken` tests `stock >= quantity` on the newest committed row version (under concurrent orders
 *   PostgreSQL re-evaluates the condition after the lock wait), so the last unit is sold once and
 *   stock never goes below zero (the CHECK constraint would refuse it anyway).
 * - `written` and `payment` write the lines and the outbox row only if every line got its stock
 *   (all parts of the statement see the UPDATE's result through `taken`).
 *
 * Each row returned is a priced line with the claimed order's columns (all null if none), in
 * `orderColumnsSelect`'s types (the id and status as text, the time as a Date).
 */
export const ORDER_STATEMENT = `
  WITH wanted AS (
    SELECT * FROM unnest($1::uuid[], $2::int[]) AS w("id", "quantity")
  ), priced AS (
    SELECT p."id", p."sku", p."name", p."priceCents", p."currency", w."quantity"
    FROM wanted AS w JOIN "Product" AS p USING ("id")
  ), cart AS (
    SELECT count(*) = $3 AND count(DISTINCT "currency") = 1 AS "orderable",
           sum("priceCents"::bigint * "quantity") AS "totalCents", min("currency") AS "currency"
    FROM priced
  ), claimed AS (
    INSERT INTO "Order" ("tenantId", "userId", "totalCents", "currency", "idempotencyKey", "intentKey")
    SELECT $4, $5::uuid, "totalCents", "currency", $6, $6 FROM cart WHERE "orderable"
    ON CONFLICT ("tenantId", "intentKey") DO NOTHING
    RETURNING "id", "status", "totalCents", "currency", "chargeId", "createdAt"
  ), locked AS MATERIALIZED (
    SELECT p."id" FROM "Product" AS p JOIN wanted USING ("id")
    WHERE EXISTS (SELECT FROM claimed)
    ORDER BY p."id" FOR UPDATE OF p
  ), taken AS (
    UPDATE "Product" AS p SET "stock" = p."stock" - w."quantity"
    FROM wanted AS w JOIN locked USING ("id")
    WHERE p."id" = w."id" AND p."stock" >= w."quantity"
    RETURNING p."id"
  ), complete AS (
    SELECT count(*) = $3 AS "ok" FROM taken
  ), written AS (
    INSERT INTO "OrderItem" ("orderId", "productId", "sku", "name", "unitPriceCents", "quantity", "lineTotalCents")
    SELECT c."id", p."id", p."sku", p."name", p."priceCents", p."quantity", p."priceCents" * p."quantity"
    FROM claimed AS c, priced AS p WHERE (SELECT "ok" FROM complete)
  ), payment AS (
    INSERT INTO "OutboxMessage" ("topic", "aggregateId", "idempotencyKey", "payload")
    SELECT $7, c."id"::text, $8,
           jsonb_build_object('orderId', c."id"::text, 'amountCents', c."totalCents", 'currency', c."currency")
    FROM claimed AS c WHERE (SELECT "ok" FROM complete)
  )
  SELECT p."id"::text AS "productId", p."sku", p."name", p."priceCents", p."currency", p."quantity",
         t."id" IS NOT NULL AS "taken", (SELECT "ok" FROM complete) AS "complete",
         c."id"::text AS "orderId", c."status"::text AS "status", c."totalCents", c."currency" AS "orderCurrency",
         c."chargeId", c."createdAt"
  FROM priced AS p LEFT JOIN claimed AS c ON true LEFT JOIN taken AS t ON t."id" = p."id"`;

/** ORDER_STATEMENT's parameters, $1 to $8. */
export function orderStatementValues(write: OrderWrite): unknown[] {
  const { lines } = write;
  return [
    lines.map((line) => line.productId),
    lines.map((line) => line.quantity),
    lines.length,
    write.tenantId,
    write.userId,
    write.checkoutKey,
    write.outbox.topic,
    write.outbox.idempotencyKey,
  ];
}

/**
 * Runs the statement in the key's transaction. A constant text with bound parameters (Prisma's
 * `$queryRawUnsafe` names the text's origin, not the values': they are never spliced in), so the
 * bench's floor runs the very same statement through `pg`.
 */
export async function writeOrder(tx: Tx, write: OrderWrite): Promise<WrittenOrder> {
  const rows = await tx.$queryRawUnsafe<WrittenRow[]>(
    ORDER_STATEMENT,
    ...orderStatementValues(write),
  );
  return writtenOrderOf(rows);
}

/** What the statement's rows say: the priced lines, the order inserted, whether it is complete. */
export function writtenOrderOf(rows: readonly WrittenRow[]): WrittenOrder {
  // Each row is a priced line (its order columns besides are never read from the lines).
  const priced: CatalogLine[] = [...rows];
  const first = rows[0];
  if (!first?.orderId) return { priced, order: null, complete: false };
  // In orderColumnsSelect's order: the answer's bytes are the order as Prisma reads it.
  const order: ClaimedOrder = {
    id: first.orderId,
    status: first.status!,
    totalCents: first.totalCents!,
    currency: first.orderCurrency!,
    chargeId: first.chargeId,
    createdAt: first.createdAt!,
  };
  return { priced, order, complete: first.complete };
}

/** The order's lines as the statement priced them, sorted by SKU (the answer's order). */
export function orderItemsOf(priced: readonly CatalogLine[]): PlacedOrder["items"] {
  return priced
    .map((line) => ({
      productId: line.productId,
      sku: line.sku,
      name: line.name,
      unitPriceCents: line.priceCents,
      quantity: line.quantity,
      lineTotalCents: line.priceCents * line.quantity,
    }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
}

/** A priced line, with the claimed order's columns on every row (all null if none was inserted). */
export type WrittenRow = CatalogLine & {
  complete: boolean;
  orderId: string | null;
  status: ClaimedOrder["status"] | null;
  totalCents: number | null;
  orderCurrency: string | null;
  chargeId: string | null;
  createdAt: Date | null;
};
