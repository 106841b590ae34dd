// The order's payment state moves forward only: PENDING → PAID or PENDING → PAYMENT_FAILED, and
// PAYMENT_FAILED → PAID when the provider did take the money after all (an operator retried the
// dead-lettered payment, or the charge that timed out on us is reported by its webhook): money
// taken is the truth the customer sees. PAID never changes again. Both the worker and the webhook
// apply outcomes here; whichever comes first moves the order, the other finds it moved and changes
// nothing, so neither a redelivered event nor a late worker can move an order backwards.
//
// A charge moves an order only when it took the order's total in the order's currency
// (charge-mismatch.ts): any other charge naming the order leaves it as it is and is recorded as a
// finding.
import { Prisma } from "../generated/prisma/client";
import type { Tx } from "./db";
import type { FindingLogger } from "./books/finding-log";
import { recordChargeMismatch, takesOrderTotal, type ChargeTaken } from "./charge-mismatch";

export type PaymentOutcome = "PAID" | "PAYMENT_FAILED";

export interface PaymentChange {
  /** The order's status afterwards; null when no order has that id. */
  status: "PENDING" | PaymentOutcome | null;
  changed: boolean;
  /** True when the charge named the order with another amount or currency (and was recorded). */
  mismatch?: true;
}

/**
 * The forward-only rule as SQL, for an UPDATE of "Order" AS o: shared by the single update below
 * and the outbox worker's batch update, so the two can never disagree.
 */
export function movesForward(outcome: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(o."status" = 'PENDING' OR (o."status" = 'PAYMENT_FAILED' AND ${outcome} = 'PAID'))`;
}

/**
 * An order id as PostgreSQL prints a uuid (lowercase, hyphenated): the only texts `"id"::text` can
 * equal. A charge's reference is whatever the merchant sent; one of any other form names no order.
 */
const ORDER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The order matching a reference, for `WHERE` on "Order" AS o: compared as a uuid (the primary
 * key's index) when the text is one as PostgreSQL prints it, which is exactly when `o."id"::text`
 * could equal it; `o."id"::text = …` would read every order instead.
 */
export function orderById(reference: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`o."id" = (CASE WHEN ${reference} ~ ${ORDER_ID.source} THEN (${reference})::uuid END)`;
}

/**
 * Moves the order `orderId` to `outcome` if the forward-only rule allows it. With `charge` (what
 * the provider reports it took), only a charge of the order's own total and currency moves it; a
 * dead letter's failure (no charge) moves it as it stands. `log`: where a refused charge's finding
 * is said.
 */
export async function applyPaymentOutcome(
  tx: Tx,
  orderId: string,
  outcome: PaymentOutcome,
  charge: ChargeTaken | null,
  log?: FindingLogger,
): Promise<PaymentChange> {
  if (!ORDER_ID.test(orderId)) return { status: null, changed: false };
  const itsOwn = charge
    ? takesOrderTotal(Prisma.sql`${charge.amountCents}::int`, Prisma.sql`${charge.currency}`)
    : Prisma.sql`true`;
  const moved = await tx.$queryRaw<{ status: PaymentOutcome }[]>`
    UPDATE "Order" AS o SET "status" = ${outcome}::"OrderStatus", "chargeId" = COALESCE(o."chargeId", ${charge?.id ?? null}), "updatedAt" = now()
    WHERE o."id" = ${orderId}::uuid AND ${movesForward(Prisma.sql`${outcome}::text`)} AND ${itsOwn}
    RETURNING o."status"::text AS "status"`;
  if (moved[0]) return { status: moved[0].status, changed: true };
  const current = await tx.$queryRaw<
    { status: NonNullable<PaymentChange["status"]>; totalCents: number; currency: string }[]
  >`SELECT "status"::text AS "status", "totalCents", "currency" FROM "Order" WHERE "id" = ${orderId}::uuid`;
  const order = current[0];
  if (!order) return { status: null, changed: false };
  if (charge && (charge.amountCents !== order.totalCents || charge.currency !== order.currency)) {
    await recordChargeMismatch(tx, { id: orderId, ...order }, charge, "webhook", log);
    return { status: order.status, changed: false, mismatch: true };
  }
  return { status: order.status, changed: false };
}
