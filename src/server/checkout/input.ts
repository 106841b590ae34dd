// checkout.placeOrder's input. Validated before the idempotency key is reserved, so malformed
// input is refused (400) and recorded nowhere.
import { z } from "zod";

/** A cart line: quantities past 99 are a typo or abuse, not a shopping basket. */
export const orderLine = z
  .object({
    productId: z.uuid(),
    quantity: z.number().int().min(1).max(99),
  })
  .strict();

export const placeOrderInput = z
  .object({
    items: z.array(orderLine).min(1).max(20),
  })
  .strict();

export type OrderLine = z.infer<typeof orderLine>;
export type PlaceOrderInput = z.infer<typeof placeOrderInput>;

/**
 * Lines for the same product become one line (quantities added), sorted by product id: one stock
 * update per product, always taken in the same order, so two carts that share products lock their
 * rows in the same sequence and cannot deadlock.
 */
export function mergeLines(items: readonly OrderLine[]): OrderLine[] {
  const byProduct = new Map<string, number>();
  for (const { productId, quantity } of items)
    byProduct.set(productId, (byProduct.get(productId) ?? 0) + quantity);
  return [...byProduct.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([productId, quantity]) => ({ productId, quantity }));
}
