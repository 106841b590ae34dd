// Reconciliation: compare the provider's records, read through its list API, with the orders, and
// record what does not add up, for the dashboard and the metrics. It runs by itself on an interval
// (startPaymentJobs) in whichever process runs payments.
//
// Each run judges a window of charges: from where the previous run stopped (kept in the shop's
// database, ReconciliationCursor) minus LATE_WRITE_MARGIN_SECONDS, up to SETTLE_SECONDS ago. A
// charge whose order is still PENDING (the worker has charged and not yet recorded it, or is
// retrying after a timeout) is undecided: the cursor stops before it, so the next run judges it
// again instead of passing it by. Each finding's dedupeKey is its kind plus the ids involved and
// findings are inserted with ON CONFLICT DO NOTHING, so a window judged twice (the margin, two
// processes at once) records nothing twice.
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";
import { closePaidDeadLetters } from "./dead-letters";
import { ChargeStatus, type ListedCharge, type PaymentProvider } from "./provider";

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
  /** Everything in this run's window that does not add up, recorded before or not. */
  findings: Finding[];
  /** How many of them this run recorded for the first time. */
  recorded: number;
  /** Dead-lettered payments whose order was paid after all, closed by this run. */
  closedDeadLetters: number;
  /** Charges the provider listed for this run's window. */
  charges: number;
}

/**
 * A charge is stamped when the provider inserts it and listed only once it commits, and two
 * machines' clocks differ: a charge can appear in the list with a creation time a little before
 * the previous run's end. Two minutes covers both many times over; judging a charge twice costs
 * nothing (findings are deduplicated).
 */
export const LATE_WRITE_MARGIN_SECONDS = 120;
/**
 * Charges younger than this are left for the next run: the webhook (or the worker's recording) of
 * a charge made a moment ago may still be on its way, and judging it now would report a payment
 * that is merely in flight.
 */
export const SETTLE_SECONDS = 30;
/** The list API's largest page: fewer round trips per run. */
const PAGE_SIZE = 100;
const CURSOR = "provider-charges";

const keyOf = (kind: FindingKind, ...ids: string[]) => `${kind}:${ids.join(",")}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface OrderRow {
  id: string;
  status: "PENDING" | "PAID" | "PAYMENT_FAILED";
  chargeId: string | null;
  totalCents: number;
  currency: string;
  createdAt: Date;
}

/** The charges created at or after `fromSeconds`, every page. */
async function listSince(
  provider: PaymentProvider,
  fromSeconds: number | undefined,
): Promise<ListedCharge[]> {
  const charges: ListedCharge[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await provider.listCharges({
      createdGte: fromSeconds,
      startingAfter,
      limit: PAGE_SIZE,
    });
    charges.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return charges;
    startingAfter = page.data.at(-1)!.id;
  }
}

const ORDER_COLUMNS = Prisma.sql`"id"::text AS "id", "status"::text AS "status", "chargeId", "totalCents", "currency", "createdAt"`;

/**
 * The orders paid in the window, read before the charges are listed: an order that is PAID now
 * was charged before now, so the list read after it holds its charge. (Read the other way round,
 * an order charged and paid between the two reads looked like a paid order without a charge.)
 */
async function paidInWindow(db: Db, from: Date, until: Date): Promise<OrderRow[]> {
  return db.$queryRaw<OrderRow[]>`
    SELECT ${ORDER_COLUMNS} FROM "Order" WHERE "status" = 'PAID' AND "createdAt" >= ${from} AND "createdAt" < ${until}`;
}

/**
 * The listed charges' orders, read after the list: each charge's order, if any, committed before
 * the charge was made.
 */
async function ordersOf(db: Db, references: string[]): Promise<OrderRow[]> {
  const ids = references.filter((r) => UUID.test(r));
  if (ids.length === 0) return [];
  return db.$queryRaw<
    OrderRow[]
  >`SELECT ${ORDER_COLUMNS} FROM "Order" WHERE "id" = ANY(${ids}::uuid[])`;
}

/**
 * Several orders for one checkout intent (tenant, checkout key), among the window's orders: each
 * order may have exactly its one charge, so the per-charge checks see nothing wrong, yet the
 * customer paid for one cart twice. Orders are unique per intent since migration 0004, so this
 * finds what was made before it (and anything that ever gets around the constraint).
 */
async function sharedIntents(db: Db, from: Date, until: Date): Promise<Finding[]> {
  const rows = await db.$queryRaw<
    { tenantId: string; checkoutKey: string; orderIds: string[]; chargeIds: string[] }[]
  >`
    SELECT o."tenantId", o."idempotencyKey" AS "checkoutKey", array_agg(o."id"::text ORDER BY o."createdAt", o."id") AS "orderIds",
           COALESCE(array_agg(o."chargeId" ORDER BY o."chargeId") FILTER (WHERE o."chargeId" IS NOT NULL), '{}') AS "chargeIds"
    FROM "Order" o
    WHERE (o."tenantId", o."idempotencyKey") IN (SELECT "tenantId", "idempotencyKey" FROM "Order" WHERE "createdAt" >= ${from} AND "createdAt" < ${until})
    GROUP BY o."tenantId", o."idempotencyKey" HAVING count(*) > 1`;
  return rows.map((r) => ({
    kind: FindingKind.SHARED_INTENT,
    dedupeKey: keyOf(FindingKind.SHARED_INTENT, ...r.orderIds, ...r.chargeIds),
    orderId: r.orderIds[0] ?? null,
    chargeIds: r.chargeIds,
    details: { tenantId: r.tenantId, checkoutKey: r.checkoutKey, orderIds: r.orderIds },
  }));
}

/** What the charges and orders of one window say, and where the next window starts. */
export function judge(
  charges: readonly ListedCharge[],
  orders: readonly OrderRow[],
  paid: readonly OrderRow[],
  window: { from: Date; until: Date },
) {
  const untilSeconds = window.until.getTime() / 1000;
  const orderById = new Map(orders.map((o) => [o.id, o]));
  const succeeded = charges.filter((c) => c.status === ChargeStatus.SUCCEEDED);
  const findings: Finding[] = [];
  let judgedThrough = window.until;

  for (const c of succeeded) {
    if (c.created >= untilSeconds) continue; // too young: the next run's
    const order = orderById.get(c.reference);
    if (order?.status === "PENDING") {
      // Charged, not yet recorded: judged by a later run, which must start no later than here.
      const created = new Date(c.created * 1000);
      if (created < judgedThrough) judgedThrough = created;
      continue;
    }
    findings.push(...chargeFindings(c, order));
  }
  findings.push(...paidWithoutCharge(paid, succeeded));
  return { findings, judgedThrough };
}

/** What one successful charge says about its order (which is not PENDING). */
function chargeFindings(c: ListedCharge, order: OrderRow | undefined): Finding[] {
  // Money taken with no order to show for it: the order was lost (a failover, say), never
  // existed, or says its payment failed.
  if (!order || order.status === "PAYMENT_FAILED") return [chargeWithoutOrder(c, order)];
  const findings: Finding[] = [];
  // The order was paid with another charge: the customer paid twice.
  if (order.chargeId !== null && order.chargeId !== c.id)
    findings.push(duplicateCharge(c, order, order.chargeId));
  if (c.amountCents !== order.totalCents || c.currency !== order.currency)
    findings.push(amountMismatch(c, order));
  return findings;
}

function chargeWithoutOrder(c: ListedCharge, order: OrderRow | undefined): Finding {
  return {
    kind: FindingKind.CHARGE_WITHOUT_ORDER,
    dedupeKey: keyOf(FindingKind.CHARGE_WITHOUT_ORDER, c.id),
    orderId: order ? order.id : null,
    chargeIds: [c.id],
    details: {
      reference: c.reference,
      amountCents: c.amountCents,
      orderStatus: order?.status ?? null,
    },
  };
}

function duplicateCharge(c: ListedCharge, order: OrderRow, recordedChargeId: string): Finding {
  return {
    kind: FindingKind.DUPLICATE_CHARGE,
    dedupeKey: keyOf(FindingKind.DUPLICATE_CHARGE, ...[recordedChargeId, c.id].sort()),
    orderId: order.id,
    chargeIds: [recordedChargeId, c.id],
    details: { amountCents: c.amountCents },
  };
}

function amountMismatch(c: ListedCharge, order: OrderRow): Finding {
  return {
    kind: FindingKind.AMOUNT_MISMATCH,
    dedupeKey: keyOf(FindingKind.AMOUNT_MISMATCH, order.id, c.id),
    orderId: order.id,
    chargeIds: [c.id],
    details: {
      orderTotalCents: order.totalCents,
      chargedCents: c.amountCents,
      orderCurrency: order.currency,
      chargeCurrency: c.currency,
    },
  };
}

/** Orders paid in the window that the provider has no successful charge for. */
function paidWithoutCharge(
  paid: readonly OrderRow[],
  succeeded: readonly ListedCharge[],
): Finding[] {
  const charged = new Set(succeeded.map((c) => c.reference));
  return paid
    .filter((o) => !charged.has(o.id))
    .map((o) => ({
      kind: FindingKind.PAID_ORDER_WITHOUT_CHARGE,
      dedupeKey: keyOf(FindingKind.PAID_ORDER_WITHOUT_CHARGE, o.id),
      orderId: o.id,
      chargeIds: o.chargeId ? [o.chargeId] : [],
      details: { totalCents: o.totalCents, recordedChargeId: o.chargeId },
    }));
}

export interface ReconciliationOptions {
  /** Tests judge charges made a moment ago: 0. */
  settleSeconds?: number;
}

export function createReconciliation(
  db: Db,
  provider: PaymentProvider,
  options: ReconciliationOptions = {},
) {
  const settleSeconds = options.settleSeconds ?? SETTLE_SECONDS;
  return {
    async runOnce(): Promise<ReconciliationResult> {
      const { from, until, first } = await nextWindow(db, settleSeconds);
      const paid = await paidInWindow(db, from, until);
      const charges = await listSince(
        provider,
        first ? undefined : Math.floor(from.getTime() / 1000),
      );
      const orders = await ordersOf(db, [...new Set(charges.map((c) => c.reference))]);
      const judged = judge(charges, orders, paid, { from, until });
      const findings = [...judged.findings, ...(await sharedIntents(db, from, until))];
      const closed = await closePaidDeadLetters(db);
      const recorded = await recordFindings(db, findings);
      await advanceCursor(db, judged.judgedThrough);
      return { findings, recorded, closedDeadLetters: closed.length, charges: charges.length };
    },
  };
}

/**
 * This run's window: from where the previous run stopped, less the margin, to `settleSeconds`
 * ago. The first run (no cursor yet) judges the provider's whole history.
 */
async function nextWindow(
  db: Db,
  settleSeconds: number,
): Promise<{ from: Date; until: Date; first: boolean }> {
  // The database's clock, not this process's: the orders' times are the database's.
  const [state] = await db.$queryRaw<{ now: Date; judgedThrough: Date | null }[]>`
    SELECT now() AS "now", (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${CURSOR}) AS "judgedThrough"`;
  const { now, judgedThrough: previous } = state!;
  const from = previous
    ? new Date(previous.getTime() - LATE_WRITE_MARGIN_SECONDS * 1000)
    : new Date(0);
  return { from, until: new Date(now.getTime() - settleSeconds * 1000), first: !previous };
}

/** Records the findings not recorded before (dedupeKey is unique); returns how many were new. */
async function recordFindings(db: Db, findings: readonly Finding[]): Promise<number> {
  if (findings.length === 0) return 0;
  const { count } = await db.reconciliationFinding.createMany({
    data: findings.map((f) => ({
      kind: f.kind,
      dedupeKey: f.dedupeKey,
      orderId: f.orderId,
      chargeIds: f.chargeIds,
      details: f.details as object,
    })),
    skipDuplicates: true,
  });
  return count;
}

/** Never backwards: two runs at once (the server's and a worker's) may finish in either order. */
async function advanceCursor(db: Db, judgedThrough: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconciliationCursor" ("name", "judgedThrough") VALUES (${CURSOR}, ${judgedThrough})
    ON CONFLICT ("name") DO UPDATE SET "judgedThrough" = GREATEST("ReconciliationCursor"."judgedThrough", EXCLUDED."judgedThrough"), "updatedAt" = now()`;
}
export type Reconciliation = ReturnType<typeof createReconciliation>;
