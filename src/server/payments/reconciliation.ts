// Reconciliation: compare the provider's books with the orders and record what does not add up,
// for the dashboard. Each finding's dedupeKey is its kind plus the ids involved, and findings are
// inserted with ON CONFLICT DO NOTHING, so a rerun records nothing it already recorded (and two
// runs at once cannot record one finding twice).
//
// Whole-table comparisons: fine for the demo's volumes. A production run would compare a window
// (charges and orders since the previous run, minus a margin for late writes).
import type { Db } from "../db/client";
import { closePaidDeadLetters } from "./dead-letters";

export const FindingKind = {
  DUPLICATE_CHARGE: "DUPLICATE_CHARGE",
  CHARGE_WITHOUT_ORDER: "CHARGE_WITHOUT_ORDER",
  PAID_ORDER_WITHOUT_CHARGE: "PAID_ORDER_WITHOUT_CHARGE",
  AMOUNT_MISMATCH: "AMOUNT_MISMATCH",
  SHARED_INTENT: "SHARED_INTENT",
} as const;
export type FindingKind = (typeof FindingKind)[keyof typeof FindingKind];

export interface Finding {
  kind: FindingKind;
  dedupeKey: string;
  orderId: string | null;
  chargeIds: string[];
  details: Record<string, unknown>;
}

export interface ReconciliationResult {
  /** Everything that does not add up now, recorded before or not. */
  findings: Finding[];
  /** How many of them this run recorded for the first time. */
  recorded: number;
  /** Dead-lettered payments whose order was paid after all, closed by this run. */
  closedDeadLetters: number;
}

const keyOf = (kind: FindingKind, ...ids: string[]) => `${kind}:${ids.join(",")}`;

/** More than one successful charge for one order: the customer paid twice. */
async function duplicateCharges(db: Db): Promise<Finding[]> {
  const rows = await db.$queryRaw<{ reference: string; chargeIds: string[]; keys: string[]; amounts: number[] }[]>`
    SELECT "reference", array_agg("id" ORDER BY "id") AS "chargeIds",
           array_agg(DISTINCT "idempotencyKey") AS "keys", array_agg("amountCents" ORDER BY "id") AS "amounts"
    FROM "ProviderCharge" WHERE "status" = 'SUCCEEDED'
    GROUP BY "reference" HAVING count(*) > 1`;
  return rows.map((r) => ({
    kind: FindingKind.DUPLICATE_CHARGE,
    dedupeKey: keyOf(FindingKind.DUPLICATE_CHARGE, ...r.chargeIds),
    orderId: r.reference,
    chargeIds: r.chargeIds,
    details: { idempotencyKeys: r.keys, amountsCents: r.amounts },
  }));
}

/** Money taken with no order to show for it: no such order, or the order says its payment failed. */
async function chargesWithoutOrder(db: Db): Promise<Finding[]> {
  const rows = await db.$queryRaw<{ chargeId: string; reference: string; amountCents: number; orderStatus: string | null }[]>`
    SELECT c."id" AS "chargeId", c."reference", c."amountCents", o."status"::text AS "orderStatus"
    FROM "ProviderCharge" c LEFT JOIN "Order" o ON o."id"::text = c."reference"
    WHERE c."status" = 'SUCCEEDED' AND (o."id" IS NULL OR o."status" = 'PAYMENT_FAILED')`;
  return rows.map((r) => ({
    kind: FindingKind.CHARGE_WITHOUT_ORDER,
    dedupeKey: keyOf(FindingKind.CHARGE_WITHOUT_ORDER, r.chargeId),
    orderId: r.orderStatus ? r.reference : null,
    chargeIds: [r.chargeId],
    details: { reference: r.reference, amountCents: r.amountCents, orderStatus: r.orderStatus },
  }));
}

/** An order we shipped as paid that the provider has no successful charge for. */
async function paidOrdersWithoutCharge(db: Db): Promise<Finding[]> {
  const rows = await db.$queryRaw<{ orderId: string; chargeId: string | null; totalCents: number }[]>`
    SELECT o."id"::text AS "orderId", o."chargeId", o."totalCents" FROM "Order" o
    WHERE o."status" = 'PAID'
      AND NOT EXISTS (SELECT 1 FROM "ProviderCharge" c WHERE c."reference" = o."id"::text AND c."status" = 'SUCCEEDED')`;
  return rows.map((r) => ({
    kind: FindingKind.PAID_ORDER_WITHOUT_CHARGE,
    dedupeKey: keyOf(FindingKind.PAID_ORDER_WITHOUT_CHARGE, r.orderId),
    orderId: r.orderId,
    chargeIds: r.chargeId ? [r.chargeId] : [],
    details: { totalCents: r.totalCents, recordedChargeId: r.chargeId },
  }));
}

/** The provider charged another amount (or currency) than the order's total. */
async function amountMismatches(db: Db): Promise<Finding[]> {
  const rows = await db.$queryRaw<
    { orderId: string; chargeId: string; totalCents: number; amountCents: number; orderCurrency: string; chargeCurrency: string }[]
  >`
    SELECT o."id"::text AS "orderId", c."id" AS "chargeId", o."totalCents", c."amountCents",
           o."currency" AS "orderCurrency", c."currency" AS "chargeCurrency"
    FROM "ProviderCharge" c JOIN "Order" o ON o."id"::text = c."reference"
    WHERE c."status" = 'SUCCEEDED' AND (c."amountCents" <> o."totalCents" OR c."currency" <> o."currency")`;
  return rows.map((r) => ({
    kind: FindingKind.AMOUNT_MISMATCH,
    dedupeKey: keyOf(FindingKind.AMOUNT_MISMATCH, r.orderId, r.chargeId),
    orderId: r.orderId,
    chargeIds: [r.chargeId],
    details: { orderTotalCents: r.totalCents, chargedCents: r.amountCents, orderCurrency: r.orderCurrency, chargeCurrency: r.chargeCurrency },
  }));
}

/**
 * Several orders for one checkout intent (tenant, checkout key), with the charges taken for them:
 * each order may have exactly its one charge, so the per-order checks above see nothing wrong, yet
 * the customer paid for one cart twice. Orders are unique per intent since migration 0004, so this
 * finds what was made before it (and anything that ever gets around the constraint).
 */
async function sharedIntents(db: Db): Promise<Finding[]> {
  const rows = await db.$queryRaw<{ tenantId: string; checkoutKey: string; orderIds: string[]; chargeIds: string[] }[]>`
    WITH shared AS (
      SELECT "tenantId", "idempotencyKey", array_agg("id"::text ORDER BY "createdAt", "id") AS "orderIds"
      FROM "Order" GROUP BY "tenantId", "idempotencyKey" HAVING count(*) > 1)
    SELECT s."tenantId", s."idempotencyKey" AS "checkoutKey", s."orderIds",
           COALESCE((SELECT array_agg(c."id" ORDER BY c."id") FROM "ProviderCharge" c
                     WHERE c."reference" = ANY(s."orderIds") AND c."status" = 'SUCCEEDED'), '{}') AS "chargeIds"
    FROM shared s`;
  return rows.map((r) => ({
    kind: FindingKind.SHARED_INTENT,
    dedupeKey: keyOf(FindingKind.SHARED_INTENT, ...r.orderIds, ...r.chargeIds),
    orderId: r.orderIds[0] ?? null,
    chargeIds: r.chargeIds,
    details: { tenantId: r.tenantId, checkoutKey: r.checkoutKey, orderIds: r.orderIds },
  }));
}

export async function runReconciliation(db: Db): Promise<ReconciliationResult> {
  const checks = [duplicateCharges, chargesWithoutOrder, paidOrdersWithoutCharge, amountMismatches, sharedIntents];
  const [findings, closed] = await Promise.all([Promise.all(checks.map((check) => check(db))).then((f) => f.flat()), closePaidDeadLetters(db)]);
  if (findings.length === 0) return { findings, recorded: 0, closedDeadLetters: closed.length };
  const { count } = await db.reconciliationFinding.createMany({
    data: findings.map((f) => ({ kind: f.kind, dedupeKey: f.dedupeKey, orderId: f.orderId, chargeIds: f.chargeIds, details: f.details as object })),
    skipDuplicates: true,
  });
  return { findings, recorded: count, closedDeadLetters: closed.length };
}
