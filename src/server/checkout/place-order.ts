// Placing an order, all inside the idempotency key's transaction: price the lines from the catalog,
// claim the intent's order (one per tenant and checkout key), take the stock, write the lines and
// the payment's outbox row. The key completes in the same transaction, so either all of it happened
// exactly once or none of it did. If the intent already has its order (its key was busted or
// expired), that order is the answer and nothing else is written. The payment itself never runs
// here: the outbox worker delivers it after commit.
import type { Tx } from "../db/client";
import type { PlacedOrder } from "./order-select";
import { PAYMENT_TOPIC, providerKeyFor, type PaymentPayload } from "../payments/outbox-message";
import { checkoutError } from "./errors";
import { mergeLines, type OrderLine } from "./input";
import { pause } from "./demo-delay";
import { claimIntent, existingOrderOf } from "./order-intent";

export interface PlaceOrderCommand {
  tenantId: string;
  userId: string;
  /** The checkout's Idempotency-Key (parsed): the intent, kept on the order, the provider's key. */
  idempotencyKey: string;
  items: readonly OrderLine[];
  /** Demo only: a pause after the stock is taken, while its rows stay locked. */
  delayMs?: number;
}

interface PricedLine {
  productId: string;
  sku: string;
  name: string;
  priceCents: number;
  currency: string;
  quantity: number;
}

export type { PlacedOrder };

export async function placeOrder(tx: Tx, command: PlaceOrderCommand): Promise<PlacedOrder> {
  const lines = mergeLines(command.items);
  const priced = await priceLines(tx, lines);
  const currency = priced[0]!.currency;
  if (priced.some((line) => line.currency !== currency)) throw checkoutError("mixed_currencies");
  const items = priced
    .map((line) => ({
      productId: line.productId,
      sku: line.sku,
      name: line.name,
      unitPriceCents: line.priceCents,
      quantity: line.quantity,
      lineTotalCents: line.priceCents * line.quantity,
    }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
  const totalCents = items.reduce((sum, item) => sum + item.lineTotalCents, 0);

  const { tenantId, idempotencyKey: checkoutKey } = command;
  const order = await claimIntent(tx, {
    tenantId,
    userId: command.userId,
    checkoutKey,
    totalCents,
    currency,
  });
  if (!order) return existingOrderOf(tx, tenantId, checkoutKey, lines);

  await takeStockAndWrite(tx, order.id, lines, items, {
    topic: PAYMENT_TOPIC,
    idempotencyKey: providerKeyFor(tenantId, checkoutKey),
    payload: { orderId: order.id, amountCents: totalCents, currency } satisfies PaymentPayload,
  });
  await pause(command.delayMs ?? 0);
  return { ...order, items };
}

/**
 * The lines with the catalog's name and price, read once: the order is priced at this read (a
 * price changed by a concurrent transaction a moment later applies to the next order). Unknown
 * products are a 404, told apart from "out of stock" before anything is written.
 */
async function priceLines(tx: Tx, lines: readonly OrderLine[]): Promise<PricedLine[]> {
  const ids = lines.map((line) => line.productId);
  // One prepared statement rather than a model query: this runs on every checkout, and Prisma's
  // query compiler and result mapping cost more CPU than the read (docs/benchmarks.md).
  const found = await tx.$queryRaw<({ id: string } & Omit<PricedLine, "productId" | "quantity">)[]>`
    SELECT "id"::text AS "id", "sku", "name", "priceCents", "currency"
    FROM "Product" WHERE "id" = ANY(${ids}::uuid[])`;
  const byId = new Map(found.map((p) => [p.id, p]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw checkoutError("product_not_found", { productIds: missing });
  return lines.map((line) => {
    const { id, ...product } = byId.get(line.productId)!;
    return { productId: id, ...product, quantity: line.quantity };
  });
}

/**
 * The rest of the order in one statement: take the stock for every line, and only if every line
 * got it, write the order's lines and its payment's outbox row (no read-back: we built both).
 *
 * The `locked` step takes the products' row locks in id order, so two carts that share products
 * always lock them in the same sequence and cannot deadlock. The UPDATE then tests
 * `stock >= quantity` on the newest committed row version (under concurrent orders PostgreSQL
 * re-evaluates the condition after the lock wait), so the last unit is sold once and stock never
 * goes below zero (the CHECK constraint would refuse it anyway). All parts of the statement see the
 * UPDATE's result through `taken`: a line it did not update had too little stock, nothing is
 * written, and the whole order is refused (its transaction rolls back the stock taken for the
 * other lines).
 */
async function takeStockAndWrite(
  tx: Tx,
  orderId: string,
  lines: readonly OrderLine[],
  items: readonly PlacedOrder["items"][number][],
  outbox: { topic: string; idempotencyKey: string; payload: PaymentPayload },
): Promise<void> {
  const column = <K extends keyof PlacedOrder["items"][number]>(key: K) =>
    items.map((item) => item[key]);
  const taken = await tx.$queryRaw<{ id: string }[]>`
    WITH wanted AS (
      SELECT * FROM unnest(${lines.map((l) => l.productId)}::uuid[], ${lines.map((l) => l.quantity)}::int[]) AS w("id", "quantity")
    ), locked AS MATERIALIZED (
      SELECT p."id" FROM "Product" AS p JOIN wanted USING ("id") ORDER BY p."id" FOR UPDATE OF p
    ), taken AS (
      UPDATE "Product" AS p SET "stock" = p."stock" - w."quantity"
      FROM wanted AS w JOIN locked USING ("id")
      WHERE p."id" = w."id" AND p."stock" >= w."quantity"
      RETURNING p."id"
    ), complete AS (
      SELECT count(*) = ${lines.length} AS "ok" FROM taken
    ), written AS (
      INSERT INTO "OrderItem" ("orderId", "productId", "sku", "name", "unitPriceCents", "quantity", "lineTotalCents")
      SELECT ${orderId}::uuid, i.* FROM unnest(${column("productId")}::uuid[], ${column("sku")}::text[], ${column("name")}::text[],
                                               ${column("unitPriceCents")}::int[], ${column("quantity")}::int[], ${column("lineTotalCents")}::int[]) AS i
      WHERE (SELECT "ok" FROM complete)
    ), payment AS (
      INSERT INTO "OutboxMessage" ("topic", "aggregateId", "idempotencyKey", "payload")
      SELECT ${outbox.topic}, ${orderId}, ${outbox.idempotencyKey}, ${JSON.stringify(outbox.payload)}::jsonb
      WHERE (SELECT "ok" FROM complete)
    )
    SELECT "id"::text AS "id" FROM taken`;
  if (taken.length === lines.length) return;
  const short = lines.find((line) => !taken.some((row) => row.id === line.productId))!;
  throw checkoutError("out_of_stock", { productId: short.productId, requested: short.quantity });
}
