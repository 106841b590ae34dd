// Checkout's deterministic refusals, as the app's one error class with reasons from the shared
// table. Each has a status that no engine answer uses (never 409), so a plain HTTP client can tell
// "out of stock" from "in progress"; the engine stores and replays them. idempotency_key_reused is
// the engine's own answer, given by checkout when only the orders know: this key already placed
// an order with other lines, found after the key's record was busted or expired
// (src/server/checkout/order-intent.ts).
import { AppError } from "@/shared/app-error";

export const CheckoutRefusal = {
  product_not_found: "A product in this order does not exist",
  out_of_stock: "Not enough stock for a product in this order",
  mixed_currencies: "All products of one order must share a currency",
  idempotency_key_reused: "This Idempotency-Key already placed an order with other lines",
} as const;
export type CheckoutReason = keyof typeof CheckoutRefusal;

export function checkoutError(
  reason: CheckoutReason,
  details: Record<string, unknown> = {},
): AppError {
  return new AppError(reason, CheckoutRefusal[reason], details);
}
