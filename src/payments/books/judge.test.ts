// The judge against an oracle: 10 000 generated histories, each a few checkout intents, each intent
// one story (paid and charged; lost and placed again, the new order taking the old charge over;
// paid with its charge gone; charged another amount or currency; charged twice; still paying, in
// flight or long stale; failed yet charged; two orders for one cart; ...), at ages from a second to
// 90 days. A story says in plain words which disagreement it leaves (the oracle): the judge must
// find exactly those, and the same history brought back into agreement must yield nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Finding } from "./finding";
import { judgeBooks, PENDING_SETTLE_SECONDS, type BookCharge, type BookOrder } from "./judge";

const NOW = new Date("2026-06-01T12:00:00Z");
const NOW_S = NOW.getTime() / 1000;
const DAY = 86_400;

const STORIES = [
  "paid",
  "replaced",
  "inFlight",
  "failedUncharged",
  "pendingUncharged",
  "chargeGone",
  "orderLost",
  "otherAmount",
  "otherCurrency",
  "chargedTwice",
  "staleCharge",
  "failedButCharged",
  "replacedOtherAmount",
  "inFlightOtherAmount",
  "twoOrders",
] as const;
type Story = (typeof STORIES)[number];

interface Told {
  story: Story;
  tenant: string;
  ageSeconds: number;
  /** The charge's delay after its order (or, taken over, how much older it is). */
  lagSeconds: number;
  amount: number;
  currency: "EUR" | "USD";
  /** Whether the charge comes with its idempotency key (looked up by it). */
  keyKnown: boolean;
  noise: boolean;
}

const told: fc.Arbitrary<Told> = fc.record({
  story: fc.constantFrom(...STORIES),
  tenant: fc.constantFrom("acme", "globex"),
  // Seconds, minutes and hours as often as days.
  ageSeconds: fc.oneof(
    fc.integer({ min: 1, max: 4 * 3600 }),
    fc.integer({ min: 1, max: 90 * DAY }),
  ),
  lagSeconds: fc.integer({ min: 0, max: 120 }),
  amount: fc.constantFrom(500, 1_900, 12_000),
  currency: fc.constantFrom("EUR", "USD"),
  keyKnown: fc.boolean(),
  noise: fc.boolean(),
});

interface Books {
  orders: BookOrder[];
  charges: BookCharge[];
}
/** A line per finding: what the oracle writes and what the judge's findings are read as. */
type Expected = string[];
const line = (kind: string, orderId: string | null, chargeIds: string[]) =>
  `${kind} order=${orderId ?? "-"} charges=${chargeIds.join(",")}`;

/**
 * One intent's story, as books: the disagreeing version, the expected findings, and the same
 * books brought back into agreement.
 */
function write(t: Told, i: number): { books: Books; expected: Expected; agreed: Books } {
  const key = `cart-${i}`;
  const intent = `${t.tenant}:${key}`;
  const orderAt = NOW_S - t.ageSeconds;
  const order = (id: string, over: Partial<BookOrder> = {}): BookOrder => ({
    id,
    tenantId: t.tenant,
    checkoutKey: key,
    intent,
    status: "PAID",
    chargeId: `ch-${i}`,
    totalCents: t.amount,
    currency: t.currency,
    createdAt: new Date(orderAt * 1000),
    ...over,
  });
  const charge = (over: Partial<BookCharge> = {}): BookCharge => ({
    id: `ch-${i}`,
    status: "SUCCEEDED",
    reference: `ord-${i}`,
    amountCents: t.amount,
    currency: t.currency,
    created: Math.min(NOW_S, orderAt + t.lagSeconds),
    ...(t.keyKnown ? { intent } : {}),
    ...over,
  });
  const paid = { orders: [order(`ord-${i}`)], charges: [charge()] };
  // A failed attempt of the provider's, naming the order: never a finding.
  if (t.noise) paid.charges.push(charge({ id: `ch-${i}-failed`, status: "FAILED" }));
  return { ...tell(t, i, paid, { order, charge }), agreed: agree(t, i, paid, { order, charge }) };
}

type Make = {
  order: (id: string, over?: Partial<BookOrder>) => BookOrder;
  charge: (over?: Partial<BookCharge>) => BookCharge;
};

/** The disagreeing books of a story, and the findings it must give (the oracle). */
function tell(t: Told, i: number, paid: Books, make: Make): { books: Books; expected: Expected } {
  const o = `ord-${i}`;
  const c = `ch-${i}`;
  const young = NOW_S - Math.floor(PENDING_SETTLE_SECONDS / 2);
  const stale = NOW_S - PENDING_SETTLE_SECONDS - 1 - (t.ageSeconds % DAY);
  const other = { ...paid, orders: [...paid.orders], charges: [...paid.charges] };
  const noFinding = (books: Books) => ({ books, expected: [] });
  switch (t.story) {
    case "paid":
      return noFinding(paid);
    case "replaced":
      return noFinding(replaced(t, i, paid, make, "PAID"));
    case "inFlight":
      return noFinding({
        orders: [make.order(o, { status: "PENDING", chargeId: null })],
        charges: [make.charge({ created: young })],
      });
    case "failedUncharged":
      return noFinding({
        orders: [make.order(o, { status: "PAYMENT_FAILED", chargeId: null })],
        charges: [],
      });
    case "pendingUncharged":
      return noFinding({
        orders: [make.order(o, { status: "PENDING", chargeId: null })],
        charges: [],
      });
    case "chargeGone":
      return {
        books: { ...other, charges: [] },
        expected: [line("PAID_ORDER_WITHOUT_CHARGE", o, [c])],
      };
    case "orderLost":
      return {
        books: { ...other, orders: [] },
        expected: [line("CHARGE_WITHOUT_ORDER", null, [c])],
      };
    case "otherAmount":
      other.charges[0] = make.charge({ amountCents: t.amount + 1 });
      return { books: other, expected: [line("AMOUNT_MISMATCH", o, [c])] };
    case "otherCurrency":
      other.charges[0] = make.charge({ currency: t.currency === "EUR" ? "USD" : "EUR" });
      return { books: other, expected: [line("AMOUNT_MISMATCH", o, [c])] };
    case "chargedTwice":
      other.charges.push(make.charge({ id: `${c}-again`, intent: undefined }));
      return { books: other, expected: [line("DUPLICATE_CHARGE", o, [c, `${c}-again`])] };
    default:
      return tellMore(t, i, paid, make, stale);
  }
}

function tellMore(t: Told, i: number, paid: Books, make: Make, stale: number) {
  const o = `ord-${i}`;
  const c = `ch-${i}`;
  switch (t.story) {
    case "staleCharge":
      return {
        books: {
          orders: [make.order(o, { status: "PENDING", chargeId: null })],
          charges: [make.charge({ created: stale })],
        },
        expected: [line("CHARGE_WITHOUT_ORDER", o, [c])],
      };
    case "failedButCharged":
      return {
        books: { ...paid, orders: [make.order(o, { status: "PAYMENT_FAILED", chargeId: null })] },
        expected: [line("CHARGE_WITHOUT_ORDER", o, [c])],
      };
    case "replacedOtherAmount": {
      // Placed again with another total: the worker refused the charge its key holds, so the new
      // order is still PENDING; known by its key, the charge is that order's, of another amount.
      const books = replaced(t, i, paid, make, "PENDING");
      books.orders[0] = { ...books.orders[0]!, totalCents: t.amount + 100, chargeId: null };
      const expected = t.keyKnown
        ? [line("AMOUNT_MISMATCH", `${o}-again`, [c])]
        : [line("CHARGE_WITHOUT_ORDER", null, [c])];
      return { books, expected };
    }
    case "inFlightOtherAmount":
      // Charged a moment ago with another amount: no recording will pay the order with it.
      return {
        books: {
          orders: [make.order(o, { status: "PENDING", chargeId: null })],
          charges: [make.charge({ created: NOW_S - 1, amountCents: t.amount + 1 })],
        },
        expected: [line("AMOUNT_MISMATCH", o, [c])],
      };
    default: {
      // Two orders for one cart, each with its own charge (made before orders were unique).
      const dup = make.order(`${o}-dup`, {
        intent: null,
        chargeId: `${c}-dup`,
        createdAt: new Date((NOW_S - t.ageSeconds + 1) * 1000),
      });
      const dupCharge = make.charge({ id: `${c}-dup`, reference: dup.id, intent: undefined });
      return {
        books: { orders: [...paid.orders, dup], charges: [...paid.charges, dupCharge] },
        expected: [line("SHARED_INTENT", o, [c, `${c}-dup`].sort())],
      };
    }
  }
}

/**
 * The order was lost after its charge; the intent placed again made `ord-i-again`, which took the
 * charge over: the charge names the lost order and is older than the new one.
 */
function replaced(t: Told, i: number, paid: Books, make: Make, status: BookOrder["status"]): Books {
  const placedAt = Math.min(NOW_S, NOW_S - t.ageSeconds + t.lagSeconds + 1);
  const chargedAt = Math.max(0, NOW_S - t.ageSeconds - t.lagSeconds * 60 * 24);
  return {
    orders: [
      make.order(`ord-${i}-again`, {
        status,
        chargeId: status === "PAID" ? `ch-${i}` : null,
        createdAt: new Date(placedAt * 1000),
      }),
    ],
    charges: [make.charge({ created: chargedAt }), ...paid.charges.slice(1)],
  };
}

/** The same intent in agreement: what the operator (or the shop) puts right. */
function agree(t: Told, i: number, paid: Books, make: Make): Books {
  switch (t.story) {
    case "orderLost":
    case "replaced":
      // Placed again: the new order takes the charge over.
      return replaced(t, i, paid, make, "PAID");
    case "staleCharge":
    case "failedButCharged":
      return { ...paid, orders: [make.order(`ord-${i}`)] };
    default:
      return paid;
  }
}

const read = (findings: Finding[]) =>
  findings.map((f) => line(f.kind, f.orderId, f.chargeIds)).sort();

function merge(parts: Books[], reversed: boolean): Books {
  const orders = parts.flatMap((p) => p.orders);
  const charges = parts.flatMap((p) => p.charges);
  return reversed ? { orders: orders.reverse(), charges: charges.reverse() } : { orders, charges };
}

describe("the books judged", () => {
  it("finds exactly the disagreements of 10 000 histories, and none once they agree", () => {
    fc.assert(
      fc.property(fc.array(told, { minLength: 1, maxLength: 4 }), fc.boolean(), (stories, rev) => {
        const written = stories.map((t, i) => write(t, i));
        const books = merge(
          written.map((w) => w.books),
          rev,
        );
        const expected = written.flatMap((w) => w.expected).sort();
        expect(read(judgeBooks(books, NOW).findings)).toEqual(expected);
        const agreed = merge(
          written.map((w) => w.agreed),
          rev,
        );
        expect(judgeBooks(agreed, NOW).findings).toEqual([]);
      }),
      { numRuns: 10_000 },
    );
  });

  it("a charge taken over by the order placed again is that order's, however much older", () => {
    const order: BookOrder = {
      id: "ord-new",
      tenantId: "acme",
      checkoutKey: "cart",
      intent: "acme:cart",
      status: "PAID",
      chargeId: "ch-old",
      totalCents: 1_900,
      currency: "EUR",
      createdAt: NOW,
    };
    const charge: BookCharge = {
      id: "ch-old",
      status: "SUCCEEDED",
      reference: "ord-lost",
      amountCents: 1_900,
      currency: "EUR",
      created: NOW_S - 60 * DAY,
      intent: "acme:cart",
    };
    expect(judgeBooks({ orders: [order], charges: [charge] }, NOW)).toEqual({
      findings: [],
      inFlight: [],
    });
    // Known by its key only (the order has not recorded it): still that order's charge.
    const unrecorded = { ...order, status: "PENDING" as const, chargeId: null };
    expect(read(judgeBooks({ orders: [unrecorded], charges: [charge] }, NOW).findings)).toEqual([
      line("CHARGE_WITHOUT_ORDER", "ord-new", ["ch-old"]),
    ]);
  });
});
