// Placing an order, all inside the idempotency key's transaction: price the lines from the catalog,
// claim the intent's order (one per tenant and checkout key), take the stock, write the lines and
// the payment's outbox row. The key completes in the same transaction, so either all of it happened
// exactly once or none of it did. If the intent already has its order (its key was busted or
// expired), that order is the answer and nothing else is written. The payment itself never runs
// here: the outbox worker delivers it after commit.
import type { Prisma } from "../../generated/prisma/client";
import type { Tx } from "../idempotency";
import type { orderSelect } from "../api/routers/orders";
import { PAYMENT_TOPIC, providerKeyFor, type PaymentPayload } from "../payments/outbox-message";
import { CheckoutError } from "./errors";
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

export type PlacedOrder = Prisma.OrderGetPayload<{ select: typeof orderSelect }>;

export async function placeOrder(tx: Tx, command: PlaceOrderCommand): Promise<PlacedOrder> {
  const lines = mergeLines(command.items);
  const priced = await priceLines(tx, lines);
  const currency = priced[0]!.currency;
  if (priced.some((line) => line.currency !== currency)) throw new CheckoutError("mixed_currencies");
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
  const order = await claimIntent(tx, { tenantId, userId: command.userId, checkoutKey, totalCents, currency });
  if (!order) return existingOrderOf(tx, tenantId, checkoutKey, lines);

  for (const line of lines) await takeStock(tx, line);
  await pause(command.delayMs ?? 0);
  await tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId: order.id })) });
  const payload: PaymentPayload = { orderId: order.id, amountCents: totalCents, currency };
  await tx.outboxMessage.createMany({
    data: [{ topic: PAYMENT_TOPIC, aggregateId: order.id, idempotencyKey: providerKeyFor(tenantId, checkoutKey), payload }],
  });
  return { ...order, items };
}

/**
 * The lines with the catalog's name and price, read once: the order is priced at this read (a
 * price changed by a concurrent transaction a moment later applies to the next order). Unknown
 * products are a 404, told apart from "out of stock" before anything is written.
 */
async function priceLines(tx: Tx, lines: readonly OrderLine[]): Promise<PricedLine[]> {
  const ids = lines.map((line) => line.productId);
  const found = await tx.product.findMany({
    where: { id: { in: ids } },
    select: { id: true, sku: true, name: true, priceCents: true, currency: true },
  });
  const byId = new Map(found.map((p) => [p.id, p]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new CheckoutError("product_not_found", { productIds: missing });
  return lines.map((line) => {
    const { id, ...product } = byId.get(line.productId)!;
    return { productId: id, ...product, quantity: line.quantity };
  });
}

/**
 * One conditional UPDATE per product: it takes the row lock, and under concurrent orders the
 * second one re-reads the committed stock before testing `stock >= quantity` (PostgreSQL
 * re-evaluates the WHERE clause on the newest row version), so the last unit is sold once and
 * stock never goes below zero (the CHECK constraint would refuse it anyway).
 */
async function takeStock(tx: Tx, line: OrderLine): Promise<void> {
  const taken = await tx.$executeRaw`
    UPDATE "Product" SET "stock" = "stock" - ${line.quantity}
    WHERE "id" = ${line.productId}::uuid AND "stock" >= ${line.quantity}`;
  if (taken !== 1) throw new CheckoutError("out_of_stock", { productId: line.productId, requested: line.quantity });
}
