// The books judged: the shop's orders and the provider's charges in, the findings out. A pure
// function of its arguments (the time is one of them): no database, no provider, no clock. The
// runner (reconciliation.ts) feeds it a page of charges with their orders, or an order with the
// charge its key holds, and keeps the findings about the subjects each call judged whole.
//
// A charge belongs to the order that recorded it (its chargeId); else, when the charge's
// idempotency key is known, to the order of that intent (`<tenant>:<checkout key>`, the key the
// outbox charges under), whatever the charge's age: an order placed again after the first was
// lost takes over the charge the provider already holds under the key, a charge older than the
// order itself; else to the order its reference names.
import {
  chargeSubject,
  finding,
  type Finding,
  FindingKind as K,
  intentSubject,
  orderSubject,
} from "./finding";

export interface BookOrder {
  id: string;
  tenantId: string;
  /** The checkout's idempotency key as the request carried it. */
  checkoutKey: string;
  /** The provider key its payment is charged under; null on a duplicate made before 0004. */
  intent: string | null;
  status: "PENDING" | "PAID" | "PAYMENT_FAILED";
  chargeId: string | null;
  totalCents: number;
  currency: string;
  createdAt: Date;
}

export interface BookCharge {
  id: string;
  status: "SUCCEEDED" | "FAILED";
  reference: string;
  amountCents: number;
  currency: string;
  /** Unix seconds, as the provider's list gives it. */
  created: number;
  /** The idempotency key it was made under, when known (a charge looked up by its key). */
  intent?: string;
}

/**
 * A succeeded charge whose order still says PENDING is in flight (the worker retries a lost
 * answer within its retry budget, a few minutes); older than this, the order will not be recorded
 * paid by itself, and the charge is a finding.
 */
export const PENDING_SETTLE_SECONDS = 15 * 60;

export interface Verdict {
  findings: Finding[];
  /** Charges left for a later judgement: their order is PENDING and they are in flight. */
  inFlight: string[];
}

/** Every finding the books hold at `now`, and the charges still in flight. */
export function judgeBooks(
  books: { orders: readonly BookOrder[]; charges: readonly BookCharge[] },
  now: Date,
): Verdict {
  const orderOf = orderLookup(books.orders);
  const findings: Finding[] = [];
  const inFlight: string[] = [];
  for (const c of books.charges) {
    if (c.status !== "SUCCEEDED") continue;
    const order = orderOf(c);
    if (isInFlight(c, order, now)) inFlight.push(c.id);
    else findings.push(...chargeFindings(c, order));
  }
  const charged = chargedOrders(books);
  for (const o of books.orders)
    if (o.status === "PAID" && !charged.has(o.id)) findings.push(paidWithoutCharge(o));
  findings.push(...sharedIntents(books.orders));
  return { findings, inFlight };
}

/** A charge's order: the one that recorded it, else its intent's, else the one it names. */
export function orderLookup(orders: readonly BookOrder[]) {
  const byId = new Map(orders.map((o) => [o.id, o]));
  const byCharge = new Map(orders.flatMap((o) => (o.chargeId ? [[o.chargeId, o] as const] : [])));
  const byIntent = new Map(orders.flatMap((o) => (o.intent ? [[o.intent, o] as const] : [])));
  return (c: BookCharge): BookOrder | undefined =>
    byCharge.get(c.id) ?? (c.intent ? byIntent.get(c.intent) : undefined) ?? byId.get(c.reference);
}

/** The orders that a successful charge among `charges` belongs to. */
export function chargedOrders(books: {
  orders: readonly BookOrder[];
  charges: readonly BookCharge[];
}): Set<string> {
  const orderOf = orderLookup(books.orders);
  const charged = new Set<string>();
  for (const c of books.charges) {
    const order = c.status === "SUCCEEDED" ? orderOf(c) : undefined;
    if (order) charged.add(order.id);
  }
  return charged;
}

const takesTotal = (c: BookCharge, o: BookOrder) =>
  c.amountCents === o.totalCents && c.currency === o.currency;

/** Charged, not yet recorded, and young: judged again later (another amount is a finding now). */
function isInFlight(c: BookCharge, order: BookOrder | undefined, now: Date): boolean {
  return (
    order?.status === "PENDING" &&
    takesTotal(c, order) &&
    c.created > now.getTime() / 1000 - PENDING_SETTLE_SECONDS
  );
}

/** What one successful charge says about its order. */
function chargeFindings(c: BookCharge, order: BookOrder | undefined): Finding[] {
  // Money taken with no order to show for it (lost, never made, failed, or waiting long after
  // the charge); a charge of another amount naming an unpaid order did not pay it.
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

const chargeWithoutOrder = (c: BookCharge, order: BookOrder | undefined) =>
  finding(K.CHARGE_WITHOUT_ORDER, [chargeSubject(c.id), c.id], order?.id ?? null, [c.id], {
    reference: c.reference,
    amountCents: c.amountCents,
    currency: c.currency,
    orderStatus: order?.status ?? null,
  });

const duplicateCharge = (c: BookCharge, order: BookOrder, recorded: string) =>
  finding(
    K.DUPLICATE_CHARGE,
    [chargeSubject(c.id), ...[recorded, c.id].sort()],
    order.id,
    [recorded, c.id],
    { amountCents: c.amountCents, currency: c.currency },
  );

/** Also what the webhook and the worker record when they refuse such a charge (same key). */
export const amountMismatch = (
  c: Pick<BookCharge, "id" | "amountCents" | "currency">,
  order: Pick<BookOrder, "id" | "totalCents" | "currency">,
) =>
  finding(K.AMOUNT_MISMATCH, [chargeSubject(c.id), order.id, c.id], order.id, [c.id], {
    orderTotalCents: order.totalCents,
    chargedCents: c.amountCents,
    orderCurrency: order.currency,
    chargeCurrency: c.currency,
  });

const paidWithoutCharge = (o: BookOrder) =>
  finding(
    K.PAID_ORDER_WITHOUT_CHARGE,
    [orderSubject(o.id), o.id],
    o.id,
    o.chargeId ? [o.chargeId] : [],
    {
      totalCents: o.totalCents,
      currency: o.currency,
      recordedChargeId: o.chargeId,
    },
  );

/**
 * Several orders for one checkout intent (tenant, checkout key): each may have exactly its one
 * charge, so the per-charge checks see nothing wrong, yet the customer paid for one cart twice.
 * Orders are unique per intent since migration 0004; this finds what was made before it.
 */
export function sharedIntents(orders: readonly BookOrder[]): Finding[] {
  const groups = new Map<string, BookOrder[]>();
  for (const o of orders) {
    const subject = intentSubject(o.tenantId, o.checkoutKey);
    groups.set(subject, [...(groups.get(subject) ?? []), o]);
  }
  return [...groups].filter(([, group]) => group.length > 1).map(([s, g]) => sharedIntent(s, g));
}

function sharedIntent(subject: string, group: BookOrder[]): Finding {
  const sorted = [...group].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
  );
  const orderIds = sorted.map((o) => o.id);
  const chargeIds = sorted.flatMap((o) => (o.chargeId ? [o.chargeId] : [])).sort();
  const { tenantId, checkoutKey } = sorted[0]!;
  const ids = [subject, ...orderIds, ...chargeIds];
  return finding(K.SHARED_INTENT, ids, orderIds[0]!, chargeIds, {
    tenantId,
    checkoutKey,
    orderIds,
  });
}
