// A charge pays only the order whose amount and currency it carries. Anyone can ask a provider to
// charge a card with any reference (a provider's signed event proves only that the provider said
// it, not that the shop asked for it), so a 1-cent charge naming a 19.00 EUR order must not pay it.
// When a charge names an order but not its total, the order is left as it is and the disagreement
// is recorded as a reconciliation finding at once, in the same transaction: the same finding (same
// kind, same dedupe key) that the next reconciliation run would record, so it is never recorded
// twice.
import { Prisma } from "../generated/prisma/client";
import type { Tx } from "./db";
import { amountMismatch } from "./books/judge";
import { logFinding, type FindingLogger } from "./books/finding-log";

/** What the provider says it took for an order. */
export interface ChargeTaken {
  id: string;
  amountCents: number;
  currency: string;
}

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
  log?: FindingLogger,
): Promise<void> {
  const finding = amountMismatch(charge, order);
  finding.details.refusedBy = source;
  const created = await tx.reconciliationFinding.createMany({
    data: [{ ...finding, details: finding.details as object }],
    skipDuplicates: true,
  });
  if (created.count > 0) logFinding(finding, "new", source, log);
}
