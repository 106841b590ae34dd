// checkout.placeOrder's input. Validated before the idempotency key is reserved, so malformed
// input is refused (400) and recorded nowhere.
import { z } from "zod";

export { mergeLines } from "@/shared/order-lines";

/** A cart line: quantities past 99 are a typo or abuse, not a shopping basket. */
const orderLine = z
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
