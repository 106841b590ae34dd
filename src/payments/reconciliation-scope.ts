// One scope of a run judged: the charges the provider created in a span, page by page, each page
// judged with its orders, written (findings recorded, gone ones closed) and dropped; then the
// settled orders of the span that no page showed charged, each looked up by its key (the intent:
// a charge taken over by an order placed again is older than the order, and is found all the
// same); then the orders that share a checkout intent. What a run holds is one page of charges or
// one chunk of orders, and a tally of counts.
import { chargeSubject, intentSubject, orderSubject, type Finding } from "./books/finding";
import type { FindingLogger } from "./books/finding-log";
import { chargedOrders, judgeBooks, type BookCharge, type BookOrder } from "./books/judge";
import { writeJudgement } from "./books/record";
import { eachChargePage, lookUpByKey, type RunBudget } from "./charge-pages";
import type { Db } from "./db";
import type { PaymentProvider } from "./provider";
import {
  ordersOf,
  recordSightings,
  sharingOrders,
  unseenOrders,
  type OrderScope,
  type Range,
} from "./reconciliation-orders";

/** The findings a run's result lists: the first this many (`more` says when there were others). */
export const LISTED_FINDINGS = 100;
/**
 * A charge is stamped when the provider inserts it and listed only once it commits, and two
 * machines' clocks differ: a charge can appear in the list with a creation time a little before
 * the previous run's end. Two minutes covers both many times over; judging a charge twice costs
 * nothing (findings are deduplicated).
 */
export const LATE_WRITE_MARGIN_SECONDS = 120;
/**
 * The share of a run's budget the main lists may use: the rest is kept for looking up, by key,
 * the charges of orders they did not show charged.
 */
const MAIN_LIST_SHARE = 0.9;

/** What a run did, in counts (and the first LISTED_FINDINGS findings). */
export interface Tally {
  /** The distinct findings judged, up to LISTED_FINDINGS. */
  findings: Finding[];
  /** True when it judged more findings than it lists. */
  more: boolean;
  recorded: number;
  reopened: number;
  closed: number;
  charges: number;
  inFlight: number;
  unjudgedOrders: number;
}

export const emptyTally = (): Tally => ({
  findings: [],
  more: false,
  recorded: 0,
  reopened: 0,
  closed: 0,
  charges: 0,
  inFlight: 0,
  unjudgedOrders: 0,
});

/** What every scope of one run shares. */
export interface ScopeContext {
  db: Db;
  provider: PaymentProvider;
  /** The database's clock at the run's start. */
  now: Date;
  budget: RunBudget;
  log?: FindingLogger;
  tally: Tally;
}

/** One judgement: the charges created in `charges`, the settled orders in `orders`. */
export interface Scope {
  charges: Range;
  orders: OrderScope;
}

/**
 * Judges a scope under the run's budget; returns the provider's second its list stopped at when
 * the budget cut it. The orders whose charge may lie past the cut (within the late-write margin)
 * are left to the run that goes on from there.
 */
export async function judgeScope(ctx: ScopeContext, scope: Scope): Promise<{ cutAt?: Date }> {
  const listing = await eachChargePage(
    ctx.provider,
    listRange(scope.charges),
    ctx.budget,
    (page) => judgePage(ctx, page),
    MAIN_LIST_SHARE,
  );
  const cutAt = listing.complete ? undefined : cutPoint(listing.last, scope.charges);
  const { from, until } = scope.orders.range;
  const margin = LATE_WRITE_MARGIN_SECONDS * 1000;
  const ordersUntil = cutAt ? Math.min(until.getTime(), cutAt.getTime() - margin) : until.getTime();
  if (ordersUntil > from.getTime())
    await judgeUnseenOrders(ctx, {
      ...scope.orders,
      range: { from, until: new Date(ordersUntil) },
    });
  await judgeIntents(ctx, scope.charges);
  return cutAt ? { cutAt } : {};
}

/**
 * A page of charges with every order they may belong to: each charge is judged whole, and so is
 * every order a successful charge of the page belongs to (it has its charge). Those orders are
 * seen: the scope's order side passes them by.
 */
async function judgePage(ctx: ScopeContext, listed: readonly BookCharge[]): Promise<void> {
  const { orders, charges: page } = await ordersOf(ctx.db, listed);
  const charged = [...chargedOrders({ orders, charges: page })];
  await recordSightings(ctx.db, charged, ctx.now);
  const paid = orders.filter((o) => o.status === "PAID" && charged.includes(o.id));
  const subjects = [
    ...page.map((c) => chargeSubject(c.id)),
    ...paid.map((o) => orderSubject(o.id)),
  ];
  await judge(ctx, { orders, charges: page }, subjects);
  ctx.tally.charges += page.length;
}

/**
 * The settled orders of the scope no page showed charged: each one's charge looked up by its key,
 * while the budget lasts. A paid order the budget leaves unlooked-up is never reported as
 * missing its charge: a later run judges it.
 */
async function judgeUnseenOrders(ctx: ScopeContext, scope: OrderScope): Promise<void> {
  for await (const chunk of unseenOrders(ctx.db, scope, ctx.now))
    for (const order of chunk) {
      const looked = await lookUpByKey(ctx.provider, order.intent, ctx.budget);
      if (looked === "spent") ctx.tally.unjudgedOrders += order.status === "PAID" ? 1 : 0;
      else await judgeWithCharge(ctx, order, looked && { ...looked, intent: order.intent! });
    }
}

/** An order and the charge its key holds (if any), with every order that charge may belong to. */
async function judgeWithCharge(ctx: ScopeContext, order: BookOrder, charge?: BookCharge) {
  const theirs = charge ? (await ordersOf(ctx.db, [charge])).orders : [];
  const orders = [order, ...theirs.filter((o) => o.id !== order.id)];
  const subjects = [orderSubject(order.id), ...(charge ? [chargeSubject(charge.id)] : [])];
  await judge(ctx, { orders, charges: charge ? [charge] : [] }, subjects);
}

/** The orders that share a checkout intent with an order created in `range`. */
async function judgeIntents(ctx: ScopeContext, range: Range): Promise<void> {
  const orders = await sharingOrders(ctx.db, range);
  const subjects = [...new Set(orders.map((o) => intentSubject(o.tenantId, o.checkoutKey)))];
  await judge(ctx, { orders, charges: [] }, subjects);
}

/** The judge's verdict on the subjects judged whole, written and counted. */
async function judge(
  ctx: ScopeContext,
  books: { orders: readonly BookOrder[]; charges: readonly BookCharge[] },
  subjects: readonly string[],
): Promise<void> {
  const verdict = judgeBooks(books, ctx.now);
  const whole = new Set(subjects);
  const findings = verdict.findings.filter((f) => whole.has(f.subject));
  const written = await writeJudgement(ctx.db, { findings, subjects }, ctx.log);
  const t = ctx.tally;
  for (const f of findings) {
    if (t.findings.some((listed) => listed.dedupeKey === f.dedupeKey)) continue;
    if (t.findings.length < LISTED_FINDINGS) t.findings.push(f);
    else t.more = true;
  }
  t.inFlight += verdict.inFlight.length;
  t.recorded += written.recorded;
  t.reopened += written.reopened;
  t.closed += written.closed;
}

const seconds = (d: Date) => d.getTime() / 1000;

/** A range as the list API takes it: whole seconds, widened outwards. */
const listRange = (range: Range) => ({
  createdGte: range.from.getTime() > 0 ? Math.floor(seconds(range.from)) : undefined,
  createdLt: Math.ceil(seconds(range.until)),
});

/**
 * Where the next run lists on from when a list stopped after `last`: its second (the charges of
 * that second are listed again, harmlessly), within the range whatever the provider said.
 */
function cutPoint(last: BookCharge | undefined, range: Range): Date {
  if (!last) return range.from;
  const at = Math.floor(last.created) * 1000;
  return new Date(Math.min(Math.max(at, range.from.getTime()), range.until.getTime()));
}
