// The one outbox topic checkout writes and the worker delivers. Shared here so the writer and the
// reader agree on the payload's shape.
import { z } from "zod";

export const PAYMENT_TOPIC = "payment.charge";

/** What the worker needs to charge an order; amounts in integer cents. */
export const paymentPayload = z.object({
  orderId: z.string(),
  amountCents: z.number().int().positive(),
  currency: z.string(),
});
export type PaymentPayload = z.infer<typeof paymentPayload>;

/**
 * The provider's idempotency key for an intent's payment: the checkout's own key, scoped by tenant
 * (keys are unique per tenant, the provider's per merchant account, which all tenants share). It
 * derives from the intent alone, never from the order: an intent has one order (unique per tenant
 * and checkout key, src/server/checkout/order-intent.ts), and even if a second payment message
 * were ever written for it, the provider would answer it with the first charge. The tenant is
 * URI-encoded so it holds no ":" and the first ":" always separates it from the key (which may
 * contain any visible character). A provider with a length cap (Stripe: 255) would get a digest.
 */
export function providerKeyFor(tenantId: string, checkoutKey: string): string {
  return `${encodeURIComponent(tenantId)}:${checkoutKey}`;
}
