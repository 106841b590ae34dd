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
//
// The provider's list is read page by page under the run's budget (charge-pages.ts): each page is
// judged against its orders and dropped, so a run holds one page and two short ids per charge
// judged, whatever the provider answers. When the budget runs out the run ends cleanly: it records
// what it judged, and each pass's cursor moves to the second its list stopped at, so the next run
// goes on from there (less the late-write margin, as always): nothing is skipped. Should a whole
// budget go on the margin's charges, the list goes on from the cut itself (a second cursor row,
// "<pass>:resume"), so every run moves on.
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";
import { BudgetStop, eachChargePage, RunBudget, type BudgetUse } from "./charge-pages";
import { DEFAULT_RECONCILE_BUDGET, type ReconcileBudget } from "./config";
import { closePaidDeadLetters } from "./dead-letters";
import {
  ChargeStatus,
  ProviderPageTooLargeError,
  type ListedCharge,
  type PaymentProvider,
} from "./provider";

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
  /** What the run read of the provider's list, and why it stopped early if it did. */
  budget: BudgetUse;
  /**
   * Set when the budget stopped the run before the end of its list: the provider's second the
   * list stopped at, where the next run (or `runSince`'s next call) goes on.
   */
  continueFrom?: Date;
  /**
   * Paid orders the run could not judge because the charge lookup for them ran out of budget:
   * judged by a later run, never reported as missing their charge.
   */
  unjudgedOrders: number;
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
/**
 * The share of a run's budget the main lists may use: the rest is kept for looking up the charges
 * of orders they did not match (an order charged long after it was placed), which would otherwise
 * be left unjudged whenever a run is cut.
 */
const MAIN_LIST_SHARE = 0.9;
const RECENT_CURSOR = "provider-charges";
const SWEEP_CURSOR = "sweep";
/** Where a pass's list stopped when the budget cut it: the next run lists on from there. */
const resumeOf = (pass: string) => `${pass}:resume`;
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

/** A range as the list API takes it: whole seconds, widened outwards. */
const listRange = (range: Range) => ({
  createdGte: range.from.getTime() > 0 ? Math.floor(seconds(range.from)) : undefined,
  createdLt: Math.ceil(seconds(range.until)),
});

const ORDER_COLUMNS = Prisma.sql`"id"::text AS "id", "status"::text AS "status", "chargeId", "totalCents", "currency", "createdAt", "updatedAt"`;

/** The paid and failed orders created (or updated) in `range`. */
async function* settledOrders(
  db: Db,
  by: "createdAt" | "updatedAt",
  range: Range,
): AsyncGenerator<OrderRow[]> {
  const column = Prisma.raw(`"${by}"`);
  // A chunk at a time, by (time, id): a run holds one chunk of the orders it checks, not all.
  let after: { at: Date; id: string } | undefined;
  for (;;) {
    const position = after
      ? Prisma.sql`AND (${column}, "id") > (${after.at}, ${after.id}::uuid)`
      : Prisma.empty;
    const chunk = await db.$queryRaw<OrderRow[]>`
      SELECT ${ORDER_COLUMNS} FROM "Order"
      WHERE "status" IN ('PAID', 'PAYMENT_FAILED') AND ${column} >= ${range.from} AND ${column} < ${range.until} ${position}
      ORDER BY ${column}, "id" LIMIT ${ORDER_CHUNK}`;
    if (chunk.length > 0) yield chunk;
    if (chunk.length < ORDER_CHUNK) return;
    const last = chunk.at(-1)!;
    after = { at: last[by], id: last.id };
  }
}

/** Settled orders read per statement. */
const ORDER_CHUNK = 5_000;

/**
 * The listed charges' orders, read after the list: the order each charge names (its reference),
 * and the order that recorded it (its chargeId). They differ when an order placed again after the
 * first was lost took over the charge the provider already held under the intent's key: the
 * charge still names the vanished order.
 */
async function ordersOf(db: Db, charges: readonly ListedCharge[]): Promise<OrderRow[]> {
  // References are the provider's text: only those that can be an order's id are looked up.
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
 * What one page of listed charges says about their orders. `now` is the database's clock: a
 * charge whose order is PENDING is a finding only once PENDING_SETTLE_SECONDS old.
 */
function judgeCharges(
  charges: readonly ListedCharge[],
  orders: readonly OrderRow[],
  now: Date,
): Finding[] {
  const orderOf = orderLookup(orders);
  const pendingBefore = seconds(now) - PENDING_SETTLE_SECONDS;
  const findings: Finding[] = [];
  for (const c of charges) {
    if (c.status !== ChargeStatus.SUCCEEDED) continue;
    const order = orderOf(c);
    // Charged, not yet recorded: in flight, judged again by a later run.
    if (order?.status === "PENDING" && c.created >= pendingBefore) continue;
    findings.push(...chargeFindings(c, order));
  }
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
      currency: c.currency,
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
    details: { amountCents: c.amountCents, currency: c.currency },
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

/**
 * What a run keeps of the pages it has judged and dropped: the ids of the charges seen, and what
 * the successful ones name (their reference) and are (their id), to tell whether an order has one.
 */
class ChargesSeen {
  private readonly ids = new Set<string>();
  private readonly succeededIds = new Set<string>();
  private readonly references = new Set<string>();

  add(page: readonly ListedCharge[]): void {
    for (const c of page) {
      this.ids.add(c.id);
      if (c.status !== ChargeStatus.SUCCEEDED) continue;
      this.succeededIds.add(c.id);
      this.references.add(c.reference);
    }
  }

  has(chargeId: string): boolean {
    return this.ids.has(chargeId);
  }

  /** The ids of the charges seen. */
  get all(): ReadonlySet<string> {
    return this.ids;
  }

  /** Whether a successful charge seen names the order, or is the one it recorded. */
  charged(o: OrderRow): boolean {
    return this.references.has(o.id) || (o.chargeId !== null && this.succeededIds.has(o.chargeId));
  }
}

/** Paid orders that the provider has no successful charge for, among the charges seen. */
function paidWithoutCharge(settled: readonly OrderRow[], seen: ChargesSeen): Finding[] {
  const charged = (o: OrderRow) => seen.charged(o);
  return settled
    .filter((o) => o.status === "PAID" && !charged(o))
    .map((o) => ({
      kind: FindingKind.PAID_ORDER_WITHOUT_CHARGE,
      dedupeKey: keyOf(FindingKind.PAID_ORDER_WITHOUT_CHARGE, o.id),
      orderId: o.id,
      chargeIds: o.chargeId ? [o.chargeId] : [],
      details: { totalCents: o.totalCents, currency: o.currency, recordedChargeId: o.chargeId },
    }));
}

/** One judgement: the charges created in `charges`, the orders settled in `orders`. */
interface Scope {
  charges: Range;
  orders: { by: "createdAt" | "updatedAt"; range: Range };
}

interface Judged {
  findings: Finding[];
  /** The charges listed. */
  chargeIds: ReadonlySet<string>;
  /** Set when the budget stopped the list: the provider's second it stopped at. */
  cutAt?: Date;
  unjudgedOrders: number;
}

/**
 * Judges a scope, its list page by page under the run's budget. An order's charge is made after
 * the order and before it is recorded paid or failed, so it was created between the order's
 * createdAt and updatedAt: a settled order whose charge is not among the scope's list (a failed
 * order's old charge, a charge made long after the order) is looked up in that span before anything
 * is said about it. When the budget stops the list at a second, the orders whose charge may lie
 * past it (within the late-write margin of it) are left to the run that goes on from there.
 */
async function judgeScope(
  db: Db,
  provider: PaymentProvider,
  scope: Scope,
  now: Date,
  budget: RunBudget,
): Promise<Judged> {
  const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
  const seen = new ChargesSeen();
  const findings: Finding[] = [];
  const judgePage = async (page: readonly ListedCharge[]) => {
    findings.push(...judgeCharges(page, await ordersOf(db, page), now));
    seen.add(page);
  };
  const listing = await eachChargePage(
    provider,
    listRange(scope.charges),
    budget,
    judgePage,
    MAIN_LIST_SHARE,
  );
  const cutAt = listing.complete ? undefined : cutPoint(listing.last, scope.charges);
  // The settled orders, read after the list: the range ends before `now` less the settling time,
  // so an order settled in it was charged before the list was read, and one settled since has
  // left the range (a later run judges it). Cut, only the orders whose charge cannot lie past the
  // cut: what a run holds of the orders grows with its budget, not with the shop's history.
  const { from, until } = scope.orders.range;
  const ordersUntil = cutAt ? Math.min(until.getTime(), cutAt.getTime() - margin) : until.getTime();
  const unmatched =
    ordersUntil > from.getTime()
      ? await unmatchedOrders(db, scope.orders.by, { from, until: new Date(ordersUntil) }, seen)
      : [];

  const lookedUp = await lookUpCharges(provider, unmatched, budget, seen, judgePage);
  // The lookup ran out of budget: a paid order it did not match may yet have its charge.
  const undetermined = new Set(
    lookedUp.complete
      ? []
      : unmatched.filter((o) => o.status === "PAID" && !seen.charged(o)).map((o) => o.id),
  );
  findings.push(
    ...paidWithoutCharge(
      unmatched.filter((o) => !undetermined.has(o.id)),
      seen,
    ),
    ...(await sharedIntents(db, scope.charges)),
  );
  return { findings, chargeIds: seen.all, cutAt, unjudgedOrders: undetermined.size };
}

/**
 * The charges of `unmatched` orders the main list did not hold, listed in the span their charges
 * were made in (from the first order's creation to the last one's recording, widened by the
 * margin), each one found judged by `judgePage`.
 */
async function lookUpCharges(
  provider: PaymentProvider,
  unmatched: readonly OrderRow[],
  budget: RunBudget,
  seen: ChargesSeen,
  judgePage: (page: readonly ListedCharge[]) => Promise<void>,
): Promise<{ complete: boolean }> {
  if (unmatched.length === 0) return { complete: true };
  const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
  const theirs = new Set(unmatched.flatMap((o) => (o.chargeId ? [o.id, o.chargeId] : [o.id])));
  const span = unmatched.reduce(
    (s, o) => ({
      from: Math.min(s.from, o.createdAt.getTime()),
      until: Math.max(s.until, o.updatedAt.getTime()),
    }),
    { from: Infinity, until: -Infinity },
  );
  return eachChargePage(
    provider,
    listRange({ from: new Date(span.from - margin), until: new Date(span.until + margin) }),
    budget,
    async (page) => {
      const relevant = page.filter(
        (c) => (theirs.has(c.reference) || theirs.has(c.id)) && !seen.has(c.id),
      );
      if (relevant.length > 0) await judgePage(relevant);
    },
  );
}

/**
 * The settled orders in `range` that no charge seen matches (and every failed one: its old charge
 * may be a finding): the others have nothing to say, and are not kept.
 */
async function unmatchedOrders(
  db: Db,
  by: "createdAt" | "updatedAt",
  range: Range,
  seen: ChargesSeen,
): Promise<OrderRow[]> {
  const unmatched: OrderRow[] = [];
  for await (const chunk of settledOrders(db, by, range))
    for (const o of chunk) if (o.status === "PAYMENT_FAILED" || !seen.charged(o)) unmatched.push(o);
  return unmatched;
}

/**
 * Where the next run lists on from when a list stopped after `last`: its second (the charges of
 * that second are listed again, harmlessly), within the range whatever the provider said.
 */
function cutPoint(last: ListedCharge | undefined, range: Range): Date {
  if (!last) return range.from;
  const at = Math.floor(last.created) * 1000;
  return new Date(Math.min(Math.max(at, range.from.getTime()), range.until.getTime()));
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
  /** What a run may read of the provider's list (DEFAULT_RECONCILE_BUDGET). */
  budget?: ReconcileBudget;
  /** The budget's clock (tests). */
  clock?: () => number;
}

/** The end of every run: the findings recorded (each once), the paid dead letters closed. */
async function finish(
  db: Db,
  findings: Finding[],
  charges: number,
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
    charges,
  };
}

/** What every run of one reconciliation shares. */
interface RunContext {
  db: Db;
  provider: PaymentProvider;
  settleSeconds: number;
  runsPerLap: number;
  newBudget: () => RunBudget;
  onFinding: ReconciliationOptions["onFinding"];
}

export function createReconciliation(
  db: Db,
  provider: PaymentProvider,
  options: ReconciliationOptions = {},
) {
  const ctx: RunContext = {
    db,
    provider,
    settleSeconds: options.settleSeconds ?? SETTLE_SECONDS,
    runsPerLap: Math.max(
      1,
      Math.floor((SWEEP_LAP_SECONDS * 1000) / (options.intervalMs ?? 60_000)),
    ),
    newBudget: () => new RunBudget(options.budget ?? DEFAULT_RECONCILE_BUDGET, options.clock),
    onFinding: options.onFinding,
  };
  return {
    /** The job's run: the recent pass and one slice of the sweep. */
    runOnce: () => runJob(ctx),
    /**
     * Everything that changed since `since` (charges created, orders updated), or the whole
     * history when it is undefined: `npm run reconcile -- --since <date>` and `--all`. Moves no
     * cursor. One call reads the list under the budget; when the budget stops it, the result's
     * `continueFrom` is where the next call (`resume`) goes on.
     */
    runSince: (since?: Date, resume?: Date) => runRange(ctx, since, resume),
  };
}

/** The job's run: the recent pass and one slice of the sweep, each going on where it stopped. */
async function runJob(ctx: RunContext): Promise<ReconciliationResult> {
  const { db, provider } = ctx;
  const budget = ctx.newBudget();
  const state = await readState(db, provider, budget);
  const { now } = state;
  const until = new Date(now.getTime() - ctx.settleSeconds * 1000);
  const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
  const ordersFrom = new Date((state.recent ?? until).getTime() - margin);
  const recentChargesFrom = later(state.recentResume, ordersFrom);
  const recent = await judgeScope(
    db,
    provider,
    {
      charges: { from: recentChargesFrom, until },
      orders: { by: "updatedAt", range: { from: ordersFrom, until } },
    },
    now,
    budget,
  );

  const { slice, lapCompleted } = sweepSlice(state.origin, state.sweep, until, ctx.runsPerLap);
  const sweepChargesFrom = later(state.sweepResume, slice.from);
  const swept = await judgeScope(
    db,
    provider,
    {
      charges: { from: sweepChargesFrom, until: slice.until },
      orders: { by: "createdAt", range: slice },
    },
    now,
    budget,
  );

  const result = await finish(
    db,
    [...recent.findings, ...swept.findings],
    new Set([...recent.chargeIds, ...swept.chargeIds]).size,
    ctx.onFinding,
  );
  // Cut: each pass goes on from the margin before the second its list stopped at (the orders
  // there, and the charges they may have, are read again); whole: from the end of its range.
  await advanceRecent(db, recent.cutAt ?? until);
  await setResume(db, RECENT_CURSOR, stalled(recent.cutAt, recentChargesFrom));
  const sweptThrough = swept.cutAt
    ? new Date(Math.max(slice.from.getTime(), swept.cutAt.getTime() - margin))
    : lapCompleted
      ? LAP_START
      : slice.until;
  await setCursor(db, SWEEP_CURSOR, sweptThrough);
  await setResume(db, SWEEP_CURSOR, stalled(swept.cutAt, sweepChargesFrom));
  return {
    ...result,
    sweep: { ...slice, lapCompleted: lapCompleted && !swept.cutAt },
    budget: budget.use(),
    ...(recent.cutAt ? { continueFrom: recent.cutAt } : {}),
    unjudgedOrders: recent.unjudgedOrders + swept.unjudgedOrders,
  };
}

/** `runSince`: one budget's worth of the range, from `resume` when a previous call was cut. */
async function runRange(
  ctx: RunContext,
  since: Date | undefined,
  resume: Date | undefined,
): Promise<ReconciliationResult> {
  const { db, provider } = ctx;
  const budget = ctx.newBudget();
  const [{ now }] = (await db.$queryRaw<{ now: Date }[]>`SELECT now() AS "now"`) as [{ now: Date }];
  const from = since ?? LAP_START;
  const until = new Date(now.getTime() - ctx.settleSeconds * 1000);
  // Going on from a cut: from the margin before it, as the job's passes do.
  const ordersFrom = resume
    ? later(new Date(resume.getTime() - LATE_WRITE_MARGIN_SECONDS * 1000), from)
    : from;
  const judged = await judgeScope(
    db,
    provider,
    {
      charges: { from: ordersFrom, until },
      orders: { by: "updatedAt", range: { from: ordersFrom, until } },
    },
    now,
    budget,
  );
  const result = await finish(db, judged.findings, judged.chargeIds.size, ctx.onFinding);
  return {
    ...result,
    budget: budget.use(),
    ...(judged.cutAt ? { continueFrom: judged.cutAt } : {}),
    unjudgedOrders: judged.unjudgedOrders,
  };
}

/**
 * Where a cut pass's list must go on next run when starting from the margin before the cut would
 * read nothing new (the whole budget went on the margin's charges: over 750 a second at the
 * default budget): from the cut itself, so every run moves on. Undefined otherwise: the next run
 * reads the margin again, and with it the charges of the orders it judges.
 */
function stalled(cutAt: Date | undefined, chargesFrom: Date): Date | undefined {
  if (!cutAt) return undefined;
  return cutAt.getTime() - LATE_WRITE_MARGIN_SECONDS * 1000 <= chargesFrom.getTime()
    ? cutAt
    : undefined;
}

/** The later of two times, an unset one being no time at all. */
function later(a: Date | null | undefined, b: Date): Date {
  return a && a > b ? a : b;
}

/** A run's budget stop as one log line: why, what it read, and where the next run goes on. */
export function budgetLine(result: ReconciliationResult): string | undefined {
  const { stopped, pages, bytes } = result.budget;
  if (!stopped) return undefined;
  const read = `${result.charges} charge(s) judged from ${pages} page(s), ${bytes} bytes`;
  const next = result.continueFrom
    ? `; the next run goes on from ${result.continueFrom.toISOString()}`
    : "; the next run starts where this one did";
  return stopped.reason === BudgetStop.PAGE_TOO_LARGE
    ? `[reconciliation] run failed: ${stopped.detail}; ${read}${next}`
    : `[reconciliation] run stopped early: it ${stopped.detail}; ${read}${next}`;
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
 * The database's clock (the orders' times are the database's), both cursors and where their lists
 * stopped if a budget cut them, and where history starts: the oldest order or the provider's oldest
 * charge (its list is oldest first; one page of one charge, read under the run's budget).
 */
async function readState(db: Db, provider: PaymentProvider, budget: RunBudget) {
  const [state] = await db.$queryRaw<
    {
      now: Date;
      recent: Date | null;
      recentResume: Date | null;
      sweep: Date | null;
      sweepResume: Date | null;
      oldestOrder: Date | null;
    }[]
  >`
    SELECT now() AS "now",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${RECENT_CURSOR}) AS "recent",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(RECENT_CURSOR)}) AS "recentResume",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${SWEEP_CURSOR}) AS "sweep",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(SWEEP_CURSOR)}) AS "sweepResume",
      (SELECT min("createdAt") FROM "Order") AS "oldestOrder"`;
  const { now, oldestOrder, ...cursors } = state!;
  const starts = [now.getTime(), oldestOrder?.getTime() ?? Infinity];
  const oldestCharge = await firstCharge(provider, budget);
  if (oldestCharge) starts.push(Math.floor(oldestCharge.created) * 1000);
  return { now, ...cursors, origin: new Date(Math.min(...starts)) };
}

/** The provider's oldest charge, read as a page of the run's budget (undefined if it ran out). */
async function firstCharge(
  provider: PaymentProvider,
  budget: RunBudget,
): Promise<ListedCharge | undefined> {
  if (budget.exhausted()) return undefined;
  try {
    const page = await provider.listCharges(
      { limit: 1 },
      { maxBytes: budget.limits.maxPageBytes, signal: budget.signal },
    );
    budget.pages += 1;
    budget.bytes += page.bytes;
    return page.data[0];
  } catch (error) {
    if (error instanceof ProviderPageTooLargeError)
      budget.stop(BudgetStop.PAGE_TOO_LARGE, error.message);
    else if (budget.signal.aborted)
      budget.stop(
        BudgetStop.TIME,
        `ran for its ${budget.limits.maxRunMs} ms (RECONCILE_MAX_RUN_MS)`,
      );
    else throw error;
    return undefined;
  }
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

/** Where a pass's list stopped (a budget cut it), or nothing when it ran to its end. */
async function setResume(db: Db, pass: string, cutAt: Date | undefined): Promise<void> {
  if (cutAt) await setCursor(db, resumeOf(pass), cutAt);
  else await db.$executeRaw`DELETE FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(pass)}`;
}
