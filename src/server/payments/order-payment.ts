// The order's payment state moves forward only: PENDING → PAID or PENDING → PAYMENT_FAILED, and
// PAYMENT_FAILED → PAID when the provider did take the money after all (an operator retried the
// dead-lettered payment, or the charge that timed out on us is reported by its webhook): money
// taken is the truth the customer sees. PAID never changes again. Both the worker and the webhook
// apply outcomes here; whichever comes first moves the order, the other finds it moved and changes
// nothing, so neither a redelivered event nor a late worker can move an order backwards.
import type { Tx } from "../db/client";

export type PaymentOutcome = "PAID" | "PAYMENT_FAILED";

export interface PaymentChange {
  /** The order's status afterwards; null when no order has that id. */
  status: "PENDING" | PaymentOutcome | null;
  changed: boolean;
}

export async function applyPaymentOutcome(tx: Tx, orderId: string, outcome: PaymentOutcome, chargeId: string | null): Promise<PaymentChange> {
  // Compared as text: a charge's reference is whatever the merchant sent, not necessarily a uuid.
  const moved = await tx.$queryRaw<{ status: PaymentOutcome }[]>`
    UPDATE "Order" SET "status" = ${outcome}::"OrderStatus", "chargeId" = COALESCE("chargeId", ${chargeId}), "updatedAt" = now()
    WHERE "id"::text = ${orderId}
      AND ("status" = 'PENDING' OR ("status" = 'PAYMENT_FAILED' AND ${outcome} = 'PAID'))
    RETURNING "status"::text AS "status"`;
  if (moved[0]) return { status: moved[0].status, changed: true };
  const current = await tx.$queryRaw<{ status: PaymentChange["status"] }[]>`
    SELECT "status"::text AS "status" FROM "Order" WHERE "id"::text = ${orderId}`;
  return { status: current[0]?.status ?? null, changed: false };
}
