// Placing an order, all inside the idempotency key's transaction: price the lines from the catalog,
// claim the intent's order (one per tenant and checkout key), take the stock, write the lines and
// the payment's outbox row, all in one statement (order-statement.ts). The key completes in the
// same transaction, so either all of it happened exactly once or none of it did. If the intent
// already has its order (its key was busted or expired), that order is the answer and nothing else
// is written. The payment itself never runs here: the outbox worker delivers it after commit.
import type { Tx } from "../db/client";
import type { PlacedOrder } from "./order-select";
import { PAYMENT_TOPIC, providerKeyFor } from "@/payments";
import { checkoutError } from "./errors";
import { mergeLines, type OrderLine } from "./input";
import { pause } from "./demo-delay";
import { existingOrderOf } from "./order-intent";
import { orderItemsOf, writeOrder, type CatalogLine } from "./order-statement";

export interface PlaceOrderCommand {
  tenantId: string;
  userId: string;
  /** The checkout's Idempotency-Key (parsed): the intent, kept on the order, the provider's key. */
  idempotencyKey: string;
  items: readonly OrderLine[];
  /** Demo only: a pause after the stock is taken, while its rows stay locked. */
  delayMs?: number;
}

/**
 * Refusals, in this order: an unknown product (404) and a cart in two currencies (400), told apart
 * from "out of stock" (412); each throws, and the transaction rolls back whatever the statement
 * wrote.
 */
export async function placeOrder(tx: Tx, command: PlaceOrderCommand): Promise<PlacedOrder> {
  const lines = mergeLines(command.items);
  const { tenantId, idempotencyKey: checkoutKey } = command;
  const written = await writeOrder(tx, {
    tenantId,
    userId: command.userId,
    checkoutKey,
    lines,
    outbox: { topic: PAYMENT_TOPIC, idempotencyKey: providerKeyFor(tenantId, checkoutKey) },
  });
  const items = checkedItemsOf(lines, written.priced);
  if (!written.order) return existingOrderOf(tx, tenantId, checkoutKey, lines);
  if (!written.complete) {
    const short = written.priced.find((line) => !line.taken)!;
    throw checkoutError("out_of_stock", { productId: short.productId, requested: short.quantity });
  }
  await pause(command.delayMs ?? 0);
  return { ...written.order, items };
}

/** The order's lines as the statement priced them; a 404 or 400 if the cart cannot be ordered. */
function checkedItemsOf(
  lines: readonly OrderLine[],
  priced: readonly CatalogLine[],
): PlacedOrder["items"] {
  const found = new Set(priced.map((line) => line.productId));
  const missing = lines.map((line) => line.productId).filter((id) => !found.has(id));
  if (missing.length > 0) throw checkoutError("product_not_found", { productIds: missing });
  if (priced.some((line) => line.currency !== priced[0]!.currency))
    throw checkoutError("mixed_currencies");
  return orderItemsOf(priced);
}
