// Checkout's deterministic refusals. Each has a stable reason and a status that no engine answer
// uses (DESIGN.md: never 409 or 422), so a plain HTTP client can tell "out of stock" from "in
// progress"; idempotency_key_reused is the engine's own answer, given by checkout when only the
// orders know. The router maps them to tRPC errors; the engine stores and replays them.

export const CheckoutRefusal = {
  product_not_found: { code: "NOT_FOUND", message: "A product in this order does not exist" },
  out_of_stock: { code: "PRECONDITION_FAILED", message: "Not enough stock for a product in this order" },
  mixed_currencies: { code: "BAD_REQUEST", message: "All products of one order must share a currency" },
  // The one refusal that shares the engine's status, on purpose: it means what the engine's 422
  // means (this key already names another request), found in the orders after the key's record
  // was busted or expired (src/server/checkout/order-intent.ts).
  idempotency_key_reused: { code: "UNPROCESSABLE_CONTENT", message: "This Idempotency-Key already placed an order with other lines" },
} as const;
export type CheckoutReason = keyof typeof CheckoutRefusal;

export class CheckoutError extends Error {
  readonly code: (typeof CheckoutRefusal)[CheckoutReason]["code"];
  constructor(
    readonly reason: CheckoutReason,
    readonly details: Record<string, unknown> = {},
  ) {
    super(CheckoutRefusal[reason].message);
    this.name = "CheckoutError";
    this.code = CheckoutRefusal[reason].code;
  }
}
