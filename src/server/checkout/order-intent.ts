// The second line of defence: an order is unique per (tenant, checkout key) in the business data
// itself, so the promise "one intent, one order" survives the key's record (an operator's bust,
// the end of its retention, any loss). A re-execution finds the order its intent already made and
// answers with it: no stock taken, no second outbox row, no second charge.
import type { Tx } from "../db/client";
import { orderSelect, type PlacedOrder } from "./order-select";
import { checkoutError } from "./errors";
import type { OrderLine } from "./input";

/**
 * The order this intent already made. The same lines (after merging) mean the same intent: its
 * order is the answer, whatever prices say today. Other lines under the same key are the engine's
 * own refusal, 422 `idempotency_key_reused`: the key names a request that is already settled.
 */
export async function existingOrderOf(
  tx: Tx,
  tenantId: string,
  checkoutKey: string,
  lines: readonly OrderLine[],
): Promise<PlacedOrder> {
  const order = await tx.order.findUnique({
    where: { tenantId_intentKey: { tenantId, intentKey: checkoutKey } },
    select: orderSelect,
  });
  // The INSERT saw a committed order for this intent, and orders are never deleted.
  if (!order) throw new Error(`the order of intent ${tenantId}/${checkoutKey} vanished`);
  if (!sameLines(order.items, lines))
    throw checkoutError("idempotency_key_reused", { orderId: order.id });
  return order;
}

function sameLines(
  items: readonly { productId: string; quantity: number }[],
  lines: readonly OrderLine[],
): boolean {
  if (items.length !== lines.length) return false;
  const wanted = new Map(lines.map((line) => [line.productId, line.quantity]));
  return items.every((item) => wanted.get(item.productId) === item.quantity);
}
