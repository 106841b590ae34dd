// Reconciliation: compare the provider's records, read through its list API, with the orders, and
// record what does not add up, for the dashboard and the metrics. It runs by itself on an interval
// (startPaymentJobs) in whichever process runs payments.
//
// Each run makes two passes, each with a cursor in the shop's database (ReconciliationCursor):
// - the recent pass judges the charges created, and the paid or failed orders *updated*, since the
//   previous run (less LATE_WRITE_MARGIN_SECONDS) up to SETTLE_SECONDS ago: whatever changed on
//   either side is judged within one period;
// - the sweep judges one slice of the whole history (charges and orders created in it), the next
//   slice each run, and wraps around to the oldest record when it reaches the present: every
//   charge and every paid or failed order is judged again at least once per SWEEP_LAP_SECONDS,
//   whatever its age.
// A charge whose order is still PENDING (the worker has charged and not yet recorded it) holds no
// cursor: it is judged again when its order changes (the recent pass) or on the sweep's next lap,
// and becomes a finding once it is PENDING_SETTLE_SECONDS old. Each finding's dedupeKey is its kind
// plus the ids involved, so a disagreement judged twice (the margin, the sweep, two processes at
// once) is recorded once; one found again after it was resolved is opened again.
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
  /** Everything this run judged that does not add up, recorded before or not. */
  findings: Finding[];
  /** How many of them this run recorded for the first time. */
  recorded: number;
  /** How many had been resolved and were found again: open again. */
  reopened: number;
  /** Dead-lettered payments whose order was paid after all, closed by this run. */
  closedDeadLetters: number;
  /** The distinct charges the provider listed for this run. */
  charges: number;
  /** The slice of history the sweep judged; `lapCompleted` when it reached the present. */
  sweep?: { from: Date; until: Date; lapCompleted: boolean };
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
/**
 * A succeeded charge whose order still says PENDING is in flight (the worker retries a lost answer
 * within its retry budget, a few minutes); older than this, the order will not be recorded paid by
 * itself, and the charge is a finding.
 */
export const PENDING_SETTLE_SECONDS = 15 * 60;
/** The sweep walks the whole history at least once in this time (at the configured interval). */
export const SWEEP_LAP_SECONDS = 12 * 60 * 60;
/** The sweep's smallest slice: a young shop's history is walked in hours, not in seconds. */
const MIN_SLICE_SECONDS = 60 * 60;
/** The list API's largest page: fewer round trips per run. */
const PAGE_SIZE = 100;
const RECENT_CURSOR = "provider-charges";
const SWEEP_CURSOR = "sweep";
/** Stored as the sweep's cursor when a lap ends: the next run starts from the oldest record. */
const LAP_START = new Date(0);

const keyOf = (kind: FindingKind, ...ids: string[]) => `${kind}:${ids.join(",")}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface OrderRow {
  id: string;
  status: "PENDING" | "PAID" | "PAYMENT_FAILED";
  chargeId: string | null;
  totalCents: number;
  currency: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A span of time, `until` excluded. */
interface Range {
  from: Date;
  until: Date;
}

const seconds = (d: Date) => d.getTime() / 1000;

/** The charges created in `range` (whole seconds, widened outwards), every page. */
async function listCharges(provider: PaymentProvider, range: Range): Promise<ListedCharge[]> {
  const charges: ListedCharge[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const page = await provider.listCharges({
      createdGte: range.from.getTime() > 0 ? Math.floor(seconds(range.from)) : undefined,
      createdLt: Math.ceil(seconds(range.until)),
      startingAfter,
      limit: PAGE_SIZE,
    });
    charges.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return charges;
    startingAfter = page.data.at(-1)!.id;
  }
}

const ORDER_COLUMNS = Prisma.sql`"id"::text AS "id", "status"::text AS "status", "chargeId", "totalCents", "currency", "createdAt", "updatedAt"`;

/**
 * The paid and failed orders created (or updated) in `range`, read before the charges are listed:
 * an order that is PAID now was charged before now, so a list read after it holds its charge.
 * (Read the other way round, an order charged and paid between the two reads looked like a paid
 * order without a charge.)
 */
async function settledOrders(
  db: Db,
  by: "createdAt" | "updatedAt",
  range: Range,
): Promise<OrderRow[]> {
  const column = Prisma.raw(`"${by}"`);
  return db.$queryRaw<OrderRow[]>`
    SELECT ${ORDER_COLUMNS} FROM "Order"
    WHERE "status" IN ('PAID', 'PAYMENT_FAILED') AND ${column} >= ${range.from} AND ${column} < ${range.until}`;
}

/**
 * The listed charges' orders, read after the list: the order each charge names (its reference),
 * and the order that recorded it (its chargeId). They differ when an order placed again after the
 * first was lost took over the charge the provider already held under the intent's key: the
 * charge still names the vanished order.
 */
async function ordersOf(db: Db, charges: readonly ListedCharge[]): Promise<OrderRow[]> {
  const ids = [...new Set(charges.map((c) => c.reference))].filter((r) => UUID.test(r));
  const chargeIds = charges.map((c) => c.id);
  if (chargeIds.length === 0) return [];
  return db.$queryRaw<OrderRow[]>`
    SELECT ${ORDER_COLUMNS} FROM "Order" WHERE "id" = ANY(${ids}::uuid[]) OR "chargeId" = ANY(${chargeIds})`;
}

/** A charge's order: the one that recorded it, else the one it names. */
function orderLookup(orders: readonly OrderRow[]) {
  const byId = new Map(orders.map((o) => [o.id, o]));
  const byCharge = new Map(orders.filter((o) => o.chargeId).map((o) => [o.chargeId!, o]));
  return (c: ListedCharge) => byCharge.get(c.id) ?? byId.get(c.reference);
}

/**
 * Several orders for one checkout intent (tenant, checkout key), among the orders created in
 * `range`: each order may have exactly its one charge, so the per-charge checks see nothing wrong,
 * yet the customer paid for one cart twice. Orders are unique per intent since migration 0004, so
 * this finds what was made before it (and anything that ever gets around the constraint).
 */
async function sharedIntents(db: Db, { from, until }: Range): Promise<Finding[]> {
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

/**
 * What the listed charges and the settled orders say. `now` is the database's clock: a charge
 * whose order is PENDING is a finding only once PENDING_SETTLE_SECONDS old.
 */
export function judge(
  charges: readonly ListedCharge[],
  orders: readonly OrderRow[],
  settled: readonly OrderRow[],
  now: Date,
): Finding[] {
  const orderOf = orderLookup(orders);
  const succeeded = charges.filter((c) => c.status === ChargeStatus.SUCCEEDED);
  const pendingBefore = seconds(now) - PENDING_SETTLE_SECONDS;
  const findings: Finding[] = [];
  for (const c of succeeded) {
    const order = orderOf(c);
    // Charged, not yet recorded: in flight, judged again by a later run.
    if (order?.status === "PENDING" && c.created >= pendingBefore) continue;
    findings.push(...chargeFindings(c, order));
  }
  findings.push(...paidWithoutCharge(settled, succeeded));
  return findings;
}

/** What one successful charge says about its order (PENDING only once no longer in flight). */
function chargeFindings(c: ListedCharge, order: OrderRow | undefined): Finding[] {
  // Money taken with no order to show for it: the order was lost (a failover, say), never
  // existed, says its payment failed, or is still waiting long after the charge.
  // A charge of another amount that names an unpaid order did not pay it (the webhook and the
  // worker refuse it, with this same finding): the amounts differ.
  if (!order || order.status !== "PAID")
    return [
      order && !takesTotal(c, order) ? amountMismatch(c, order) : chargeWithoutOrder(c, order),
    ];
  const findings: Finding[] = [];
  // The order was paid with another charge: the customer paid twice.
  if (order.chargeId !== null && order.chargeId !== c.id)
    findings.push(duplicateCharge(c, order, order.chargeId));
  if (!takesTotal(c, order)) findings.push(amountMismatch(c, order));
  return findings;
}

const takesTotal = (c: ListedCharge, order: OrderRow) =>
  c.amountCents === order.totalCents && c.currency === order.currency;

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

/** Whether an order has one of `succeeded`: one names it, or it recorded one of them. */
function chargedOrders(succeeded: readonly ListedCharge[]) {
  const references = new Set(succeeded.map((c) => c.reference));
  const ids = new Set(succeeded.map((c) => c.id));
  return (o: OrderRow) => references.has(o.id) || (o.chargeId !== null && ids.has(o.chargeId));
}

/** Paid orders that the provider has no successful charge for. */
function paidWithoutCharge(
  settled: readonly OrderRow[],
  succeeded: readonly ListedCharge[],
): Finding[] {
  const charged = chargedOrders(succeeded);
  return settled
    .filter((o) => o.status === "PAID" && !charged(o))
    .map((o) => ({
      kind: FindingKind.PAID_ORDER_WITHOUT_CHARGE,
      dedupeKey: keyOf(FindingKind.PAID_ORDER_WITHOUT_CHARGE, o.id),
      orderId: o.id,
      chargeIds: o.chargeId ? [o.chargeId] : [],
      details: { totalCents: o.totalCents, recordedChargeId: o.chargeId },
    }));
}

/** One judgement: the charges created in `charges`, the orders settled in `orders`. */
interface Scope {
  charges: Range;
  orders: { by: "createdAt" | "updatedAt"; range: Range };
}

/**
 * Judges a scope. An order's charge is made after the order and before it is recorded paid or
 * failed, so it was created between the order's createdAt and updatedAt: a settled order whose
 * charge is not among the scope's list (a failed order's old charge, a charge made long after the
 * order) is looked up in that span before anything is said about it.
 */
async function judgeScope(
  db: Db,
  provider: PaymentProvider,
  scope: Scope,
  now: Date,
): Promise<{ findings: Finding[]; chargeIds: string[] }> {
  const settled = await settledOrders(db, scope.orders.by, scope.orders.range);
  const charges = await listCharges(provider, scope.charges);
  const charged = chargedOrders(charges.filter((c) => c.status === ChargeStatus.SUCCEEDED));
  const unmatched = settled.filter((o) => o.status === "PAYMENT_FAILED" || !charged(o));
  if (unmatched.length > 0) {
    const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
    const theirs = new Set(unmatched.flatMap((o) => (o.chargeId ? [o.id, o.chargeId] : [o.id])));
    const known = new Set(charges.map((c) => c.id));
    const more = await listCharges(provider, {
      from: new Date(Math.min(...unmatched.map((o) => o.createdAt.getTime())) - margin),
      until: new Date(Math.max(...unmatched.map((o) => o.updatedAt.getTime())) + margin),
    });
    charges.push(
      ...more.filter((c) => (theirs.has(c.reference) || theirs.has(c.id)) && !known.has(c.id)),
    );
  }
  const orders = await ordersOf(db, charges);
  const findings = [
    ...judge(charges, orders, settled, now),
    ...(await sharedIntents(db, scope.charges)),
  ];
  return { findings, chargeIds: charges.map((c) => c.id) };
}

/** A finding as one log line: its kind, what it names, and whether it is new or back. */
export function findingLine(finding: Finding, state: "new" | "reopened"): string {
  const order = finding.orderId ? `order ${finding.orderId}` : "no order";
  const charges = finding.chargeIds.length ? `charge ${finding.chargeIds.join(", ")}` : "no charge";
  const what = state === "new" ? "new finding" : "finding open again";
  return `[reconciliation] ${what} ${finding.kind}: ${order}, ${charges} (dashboard: /admin)`;
}

export interface ReconciliationOptions {
  /** Tests judge charges made a moment ago: 0. */
  settleSeconds?: number;
  /** How often the job runs: the sweep's slices are sized to finish a lap in SWEEP_LAP_SECONDS. */
  intervalMs?: number;
  /**
   * Told once of each finding a run records for the first time, and of each one it opens again
   * (the disagreement came back after being resolved): one log line each, never one per run.
   */
  onFinding?: (finding: Finding, state: "new" | "reopened") => void;
}

/** Records the findings, closes the paid dead letters: the end of every run. */
/** The end of every run: the findings recorded (each once), the paid dead letters closed. */
async function finish(
  db: Db,
  findings: Finding[],
  chargeIds: string[],
  onFinding: ReconciliationOptions["onFinding"],
) {
  const unique = [...new Map(findings.map((f) => [f.dedupeKey, f])).values()];
  const closed = await closePaidDeadLetters(db);
  const { recorded, reopened } = await recordFindings(db, unique);
  if (onFinding)
    for (const f of unique) {
      if (recorded.has(f.dedupeKey)) onFinding(f, "new");
      else if (reopened.has(f.dedupeKey)) onFinding(f, "reopened");
    }
  return {
    findings: unique,
    recorded: recorded.size,
    reopened: reopened.size,
    closedDeadLetters: closed.length,
    charges: new Set(chargeIds).size,
  };
}

export function createReconciliation(
  db: Db,
  provider: PaymentProvider,
  options: ReconciliationOptions = {},
) {
  const settleSeconds = options.settleSeconds ?? SETTLE_SECONDS;
  const runsPerLap = Math.max(
    1,
    Math.floor((SWEEP_LAP_SECONDS * 1000) / (options.intervalMs ?? 60_000)),
  );

  return {
    /** The job's run: the recent pass and one slice of the sweep. */
    async runOnce(): Promise<ReconciliationResult> {
      const { now, recent: previous, sweep: position, origin } = await readState(db, provider);
      const until = new Date(now.getTime() - settleSeconds * 1000);
      const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
      const recentRange = {
        from: new Date((previous ?? until).getTime() - margin),
        until,
      };
      const recent = await judgeScope(
        db,
        provider,
        { charges: recentRange, orders: { by: "updatedAt", range: recentRange } },
        now,
      );

      const { slice, lapCompleted } = sweepSlice(origin, position, until, runsPerLap);
      const swept = await judgeScope(
        db,
        provider,
        { charges: slice, orders: { by: "createdAt", range: slice } },
        now,
      );

      const result = await finish(
        db,
        [...recent.findings, ...swept.findings],
        [...recent.chargeIds, ...swept.chargeIds],
        options.onFinding,
      );
      await advanceRecent(db, until);
      await setCursor(db, SWEEP_CURSOR, lapCompleted ? LAP_START : slice.until);
      return { ...result, sweep: { ...slice, lapCompleted } };
    },

    /**
     * Everything that changed since `since` (charges created, orders updated), or the whole
     * history when it is undefined: `npm run reconcile -- --since <date>` and `--all`. Moves no
     * cursor.
     */
    async runSince(since?: Date): Promise<ReconciliationResult> {
      const [{ now }] = (await db.$queryRaw<{ now: Date }[]>`SELECT now() AS "now"`) as [
        { now: Date },
      ];
      const range = {
        from: since ?? LAP_START,
        until: new Date(now.getTime() - settleSeconds * 1000),
      };
      const judged = await judgeScope(
        db,
        provider,
        { charges: range, orders: { by: "updatedAt", range } },
        now,
      );
      return finish(db, judged.findings, judged.chargeIds, options.onFinding);
    },
  };
}

/**
 * The sweep's slice for this run: from its position (or the start of history) to a lap's share of
 * history later, no further than the present; a lap is complete when the slice reaches it.
 */
function sweepSlice(origin: Date, position: Date | null, until: Date, runsPerLap: number) {
  const sliceMs = Math.max(
    MIN_SLICE_SECONDS * 1000,
    Math.ceil((until.getTime() - origin.getTime()) / runsPerLap),
  );
  const from = position && position > origin ? position : origin;
  const end = new Date(Math.min(from.getTime() + sliceMs, until.getTime()));
  return { slice: { from, until: end }, lapCompleted: end.getTime() >= until.getTime() };
}

/**
 * The database's clock (the orders' times are the database's), both cursors, and where history
 * starts: the oldest order or the provider's oldest charge (its list is oldest first).
 */
async function readState(db: Db, provider: PaymentProvider) {
  const [state] = await db.$queryRaw<
    { now: Date; recent: Date | null; sweep: Date | null; oldestOrder: Date | null }[]
  >`
    SELECT now() AS "now",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${RECENT_CURSOR}) AS "recent",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${SWEEP_CURSOR}) AS "sweep",
      (SELECT min("createdAt") FROM "Order") AS "oldestOrder"`;
  const { now, recent, sweep, oldestOrder } = state!;
  const [oldestCharge] = (await provider.listCharges({ limit: 1 })).data;
  const starts = [now.getTime(), oldestOrder?.getTime() ?? Infinity];
  if (oldestCharge) starts.push(Math.floor(oldestCharge.created) * 1000);
  return { now, recent, sweep, origin: new Date(Math.min(...starts)) };
}

/**
 * Records the findings not recorded before (dedupeKey is unique) and opens again the ones that
 * had been resolved: the disagreement is back.
 */
async function recordFindings(
  db: Db,
  findings: readonly Finding[],
): Promise<{ recorded: Set<string>; reopened: Set<string> }> {
  if (findings.length === 0) return { recorded: new Set(), reopened: new Set() };
  const created = await db.reconciliationFinding.createManyAndReturn({
    data: findings.map((f) => ({
      kind: f.kind,
      dedupeKey: f.dedupeKey,
      orderId: f.orderId,
      chargeIds: f.chargeIds,
      details: f.details as object,
    })),
    skipDuplicates: true,
    select: { dedupeKey: true },
  });
  const opened = await db.reconciliationFinding.updateManyAndReturn({
    where: { dedupeKey: { in: findings.map((f) => f.dedupeKey) }, resolvedAt: { not: null } },
    // Found once more: once_reconciliation_findings_total counts it again.
    data: { resolvedAt: null, resolution: null, resolvedBy: null, timesFound: { increment: 1 } },
    select: { dedupeKey: true },
  });
  return {
    recorded: new Set(created.map((f) => f.dedupeKey)),
    reopened: new Set(opened.map((f) => f.dedupeKey)),
  };
}

/** Never backwards: two runs at once (the server's and a worker's) may finish in either order. */
async function advanceRecent(db: Db, judgedThrough: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconciliationCursor" ("name", "judgedThrough") VALUES (${RECENT_CURSOR}, ${judgedThrough})
    ON CONFLICT ("name") DO UPDATE SET "judgedThrough" = GREATEST("ReconciliationCursor"."judgedThrough", EXCLUDED."judgedThrough"), "updatedAt" = now()`;
}

/**
 * The sweep's position. Two runs at once may judge a slice twice or skip back a slice: harmless,
 * the findings are deduplicated and the next lap comes anyway.
 */
async function setCursor(db: Db, name: string, judgedThrough: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconciliationCursor" ("name", "judgedThrough") VALUES (${name}, ${judgedThrough})
    ON CONFLICT ("name") DO UPDATE SET "judgedThrough" = EXCLUDED."judgedThrough", "updatedAt" = now()`;
}
export type Reconciliation = ReturnType<typeof createReconciliation>;
