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
 * The provider's idempotency key for an order's payment: the checkout's own key, scoped by tenant
 * (keys are unique per tenant, the provider's per merchant account, which all tenants share) and
 * by order (a key may run anew once its retention has passed, and that second order must not be
 * handed the first one's charge). Stable for the order's whole life, so every retry of the
 * delivery (worker crash, timeout, second worker) reaches the provider under the same key.
 */
export function providerKeyFor(tenantId: string, checkoutKey: string, orderId: string): string {
  return `${tenantId}:${orderId}:${checkoutKey}`;
}
