// A charge pays only the order whose amount and currency it carries. Anyone can ask a provider to
// charge a card with any reference (a provider's signed event proves only that the provider said
// it, not that the shop asked for it), so a 1-cent charge naming a 19.00 EUR order must not pay it.
// When a charge names an order but not its total, the order is left as it is and the disagreement
// is recorded as a reconciliation finding at once, in the same transaction: the same finding (same
// kind, same dedupe key) that the next reconciliation run would record, so it is never recorded
// twice.
import { Prisma } from "../../generated/prisma/client";
import type { Tx } from "../db/client";
import { FindingKind } from "./reconciliation";

/** What the provider says it took for an order. */
export interface ChargeTaken {
  id: string;
  amountCents: number;
  currency: string;
}

/** The finding's dedupe key: reconciliation's for an amount that differs (kind, order, charge). */
export const mismatchKey = (orderId: string, chargeId: string) =>
  `${FindingKind.AMOUNT_MISMATCH}:${orderId},${chargeId}`;

/**
 * For `WHERE` on "Order" AS o: the charge (its amount and currency as SQL values) took exactly the
 * order's total in the order's currency.
 */
export function takesOrderTotal(amountCents: Prisma.Sql, currency: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(o."totalCents" = ${amountCents} AND o."currency" = ${currency})`;
}

/** Records that `charge` named `order` with another amount or currency (once per pair). */
export async function recordChargeMismatch(
  tx: Tx,
  order: { id: string; totalCents: number; currency: string },
  charge: ChargeTaken,
  source: "webhook" | "worker",
): Promise<void> {
  await tx.reconciliationFinding.createMany({
    data: [
      {
        kind: FindingKind.AMOUNT_MISMATCH,
        dedupeKey: mismatchKey(order.id, charge.id),
        orderId: order.id,
        chargeIds: [charge.id],
        details: {
          orderTotalCents: order.totalCents,
          chargedCents: charge.amountCents,
          orderCurrency: order.currency,
          chargeCurrency: charge.currency,
          refusedBy: source,
        },
      },
    ],
    skipDuplicates: true,
  });
}
