// Placing an order, all inside the idempotency key's transaction: validate the lines against the
// catalog, take the stock, write the order, its lines and the payment's outbox row. The key
// completes in the same transaction, so either all of it happened exactly once or none of it did.
// The payment itself never runs here: the outbox worker delivers it after commit.
import type { Prisma } from "../../generated/prisma/client";
import type { Tx } from "../db/client";
import { orderSelect } from "../api/routers/orders";
import { PAYMENT_TOPIC, providerKeyFor, type PaymentPayload } from "../payments/outbox-message";
import { checkoutError } from "./errors";
import { mergeLines, type OrderLine } from "./input";
import { pause } from "./demo-delay";

export interface PlaceOrderCommand {
  tenantId: string;
  userId: string;
  /** The checkout's Idempotency-Key (parsed): kept on the order, passed on to the provider. */
  idempotencyKey: string;
  items: readonly OrderLine[];
  /** Demo only: a pause after the stock is taken, while its rows stay locked. */
  delayMs?: number;
}

interface TakenLine {
  productId: string;
  sku: string;
  name: string;
  priceCents: number;
  currency: string;
  quantity: number;
}

export type PlacedOrder = Prisma.OrderGetPayload<{ select: typeof orderSelect }>;

export async function placeOrder(tx: Tx, command: PlaceOrderCommand): Promise<PlacedOrder> {
  const lines = mergeLines(command.items);
  await assertProductsExist(tx, lines);

  const taken: TakenLine[] = [];
  for (const line of lines) taken.push(await takeStock(tx, line));
  const currency = taken[0]!.currency;
  if (taken.some((line) => line.currency !== currency)) throw checkoutError("mixed_currencies");

  await pause(command.delayMs ?? 0);

  const items = taken.map((line) => ({
    productId: line.productId,
    sku: line.sku,
    name: line.name,
    unitPriceCents: line.priceCents,
    quantity: line.quantity,
    lineTotalCents: line.priceCents * line.quantity,
  }));
  const totalCents = items.reduce((sum, item) => sum + item.lineTotalCents, 0);

  const order = await tx.order.create({
    data: {
      tenantId: command.tenantId,
      userId: command.userId,
      totalCents,
      currency,
      idempotencyKey: command.idempotencyKey,
      items: { create: items },
    },
    select: orderSelect,
  });

  const payload: PaymentPayload = { orderId: order.id, amountCents: totalCents, currency };
  await tx.outboxMessage.create({
    data: {
      topic: PAYMENT_TOPIC,
      aggregateId: order.id,
      idempotencyKey: providerKeyFor(command.tenantId, command.idempotencyKey, order.id),
      payload,
    },
  });
  return order;
}

/** Unknown products are a 404, told apart from "out of stock" before any stock is touched. */
async function assertProductsExist(tx: Tx, lines: readonly OrderLine[]): Promise<void> {
  const ids = lines.map((line) => line.productId);
  const found = await tx.product.findMany({ where: { id: { in: ids } }, select: { id: true } });
  if (found.length === ids.length) return;
  const known = new Set(found.map((p) => p.id));
  throw checkoutError("product_not_found", { productIds: ids.filter((id) => !known.has(id)) });
}

/**
 * One conditional UPDATE per product: it takes the row lock, and under concurrent orders the
 * second one re-reads the committed stock before testing `stock >= quantity` (PostgreSQL
 * re-evaluates the WHERE clause on the newest row version), so the last unit is sold once and
 * stock never goes below zero (the CHECK constraint would refuse it anyway). The price is read
 * from the same row version that was decremented.
 */
async function takeStock(tx: Tx, line: OrderLine): Promise<TakenLine> {
  const rows = await tx.$queryRaw<Omit<TakenLine, "quantity">[]>`
    UPDATE "Product" SET "stock" = "stock" - ${line.quantity}
    WHERE "id" = ${line.productId}::uuid AND "stock" >= ${line.quantity}
    RETURNING "id"::text AS "productId", "sku", "name", "priceCents", "currency"`;
  const row = rows[0];
  if (!row) throw checkoutError("out_of_stock", { productId: line.productId, requested: line.quantity });
  return { ...row, quantity: line.quantity };
}
