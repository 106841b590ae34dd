// The verdict: what the clients saw (intents, answers) against what the database holds (facts).
// Each row is one promise of once; a row with offenders names them (intents as tenant/key), and any
// offender makes the run fail.
import type { DatabaseFacts } from "./facts";
import type { Fault, Intent, RequestSample } from "./record";
import { percentile } from "../../tools/stats";

export interface CheckRow {
  label: string;
  value: string;
  expected: string;
  /** null for figures that inform (counts, throughput) and cannot fail. */
  ok: boolean | null;
  offenders: string[];
  /** For a row that counts a part of a whole ("3 of 4"): both numbers, for the verdict. */
  tally?: { part: number; whole: number };
}

export interface RunFigures {
  intents: Intent[];
  requests: RequestSample[];
  /** productId → stock before the fire. */
  initialStock: Map<string, number>;
  /** ms since start: the window "under fire". */
  fireEndsAt: number;
  /** The faults injected (their windows excuse refusals). */
  faults?: Fault[];
}

/**
 * After a fault the app may refuse for a while (503, Retry-After): an instance restarting, a
 * database coming back, a new primary being elected and found by HAProxy. 15 s covers each of
 * these here; a refusal later than that is the app failing to serve a healthy system.
 */
export const FAULT_RECOVERY_MS = 15_000;
/**
 * Outside the fault windows, at most this share of the answers may be refusals (503). A healthy
 * system refuses nearly nothing; a machine too busy for its load refuses a lot (62–69 % in the
 * runs that showed it), and a soak whose answers are mostly refusals proves nothing about the rest.
 */
export const MAX_REFUSAL_SHARE = 0.1;
/**
 * Fewer answers than this outside the fault windows are too few to judge a share by (the short
 * soak's 25 s are almost all fault windows): the share is shown, the bound not applied.
 */
export const MIN_ANSWERS_FOR_REFUSAL_BOUND = 100;

const intentName = (i: Pick<Intent, "tenant" | "key">) => `${i.tenant}/${i.key}`;

function row(
  label: string,
  expected: string,
  offenders: string[],
  value: string = String(offenders.length),
): CheckRow {
  return { label, value, expected, ok: offenders.length === 0, offenders };
}
const info = (label: string, value: string): CheckRow => ({
  label,
  value,
  expected: "",
  ok: null,
  offenders: [],
});

export function evaluate(facts: DatabaseFacts, run: RunFigures): CheckRow[] {
  const ordersByIntent = new Map<string, typeof facts.orders>();
  for (const o of facts.orders) {
    const name = `${o.tenantId}/${o.key}`;
    ordersByIntent.set(name, [...(ordersByIntent.get(name) ?? []), o]);
  }
  const answered = run.intents.filter((i) => i.final === 200);
  const refused = run.intents.filter((i) => i.final !== undefined && i.final !== 200);
  const open = run.intents.length - answered.length - refused.length;
  return [
    info("intents tried", String(run.intents.length)),
    // A run in which nothing succeeded proves nothing: it fails too.
    {
      label: "intents answered 200",
      value: `${answered.length} (refused with a stored 4xx: ${refused.length}, still open at the end: ${open})`,
      expected: "> 0",
      ok: answered.length > 0,
      offenders: answered.length > 0 ? [] : ["no intent was answered 200: the run proved nothing"],
    },
    ordersPerIntent(run.intents, ordersByIntent),
    sameOrderInEveryAnswer(run.intents, ordersByIntent),
    acknowledgedOrdersKept(run.intents, facts),
    chargesPerPaidOrder(facts),
    chargesWithoutOrder(facts),
    chargesPerIntent(run.intents, ordersByIntent, facts),
    stockArithmetic(facts, run.initialStock),
    row(
      "keys PROCESSING past the sweeper's window",
      "0",
      facts.stuckKeys.map((k) => `${k.scope}/${k.key}`),
    ),
    outboxDrained(facts),
    lossFoundByReconciliation(facts),
    row(
      "reconciliation findings besides lost orders",
      "0",
      facts.findings
        .filter((f) => !isLostOrderFinding(f))
        .map((f) => `${f.kind} order ${f.orderId ?? "-"} charges ${f.chargeIds.join(",")}`),
    ),
    row(
      "advisory locks left held",
      "0",
      facts.advisoryLocks > 0 ? [`${facts.advisoryLocks} advisory lock(s) still granted`] : [],
      String(facts.advisoryLocks),
    ),
    answersWith(500, run),
    answersWith(422, run),
    ...underFire(run),
    ...refusals(run),
  ];
}

/** A charge the provider holds for an order the shop does not: what a lost order leaves behind. */
const isLostOrderFinding = (f: DatabaseFacts["findings"][number]) =>
  f.kind === "CHARGE_WITHOUT_ORDER" && f.orderId === null;

/**
 * Every charge whose order is gone must be a reconciliation finding, found by the app's own job
 * while it ran.
 */
function lossFoundByReconciliation(facts: DatabaseFacts): CheckRow {
  const found = new Set(facts.findings.filter(isLostOrderFinding).flatMap((f) => f.chargeIds));
  const missed = facts.orphanCharges.filter((c) => !found.has(c));
  const tally = {
    part: facts.orphanCharges.length - missed.length,
    whole: facts.orphanCharges.length,
  };
  return {
    ...row(
      FOUND_BY_RECONCILIATION,
      "every one",
      missed.map((c) => `charge ${c}: no finding`),
      `${tally.part} of ${tally.whole}`,
    ),
    tally,
  };
}

/**
 * The fault windows, as [from, to) in ms since the run started: from a fault to FAULT_RECOVERY_MS
 * after it, and for an outage from the database's stop to FAULT_RECOVERY_MS after it is back (to
 * the run's end if it never came back).
 */
function faultWindows(faults: readonly Fault[]): Array<[number, number]> {
  const windows: Array<[number, number]> = [];
  let stoppedAt: number | undefined;
  for (const f of faults) {
    if (f.kind === "bust" || f.kind === "release" || f.kind === "provider-recovers") continue;
    if (f.kind === "pg-stop") stoppedAt = f.t;
    if (f.kind === "pg-start" && stoppedAt !== undefined) {
      windows.push([stoppedAt, f.t + FAULT_RECOVERY_MS]);
      stoppedAt = undefined;
    }
    windows.push([f.t, f.t + FAULT_RECOVERY_MS]);
  }
  if (stoppedAt !== undefined) windows.push([stoppedAt, Infinity]);
  return windows;
}

/**
 * Whether a request's life, from its start to its answer, overlaps a fault window: a request sent
 * before a restart and refused during it was refused by the fault, not by a busy machine.
 */
const overlapsFault = (r: RequestSample, windows: ReadonlyArray<[number, number]>) =>
  windows.some(([from, to]) => r.t < to && r.t + r.ms >= from);

/**
 * What share of the answers were refusals (503), why, and whether refusals outside the fault
 * windows stay under the bound.
 */
function refusals(run: RunFigures): CheckRow[] {
  const answers = run.requests.filter((r) => r.t < run.fireEndsAt && typeof r.seen === "number");
  const refused = answers.filter((r) => r.seen === 503);
  const reasons = new Map<string, { n: number; waits: number[] }>();
  for (const r of refused) {
    const tally = reasons.get(r.reason ?? "unknown") ?? { n: 0, waits: [] };
    tally.n++;
    if (r.retryAfter !== undefined) tally.waits.push(r.retryAfter);
    reasons.set(r.reason ?? "unknown", tally);
  }
  const byReason = [...reasons]
    .sort((a, b) => b[1].n - a[1].n)
    .map(([reason, { n, waits }]) => `${reason} ×${n}${retryAfterRange(waits)}`);
  const share = (part: number, whole: number) =>
    whole ? `${((100 * part) / whole).toFixed(1)} %` : "–";
  const windows = faultWindows(run.faults ?? []);
  const outside = answers.filter((r) => !overlapsFault(r, windows));
  const refusedOutside = outside.filter((r) => r.seen === 503);
  const judged = outside.length >= MIN_ANSWERS_FOR_REFUSAL_BOUND;
  const ok = !judged || refusedOutside.length <= MAX_REFUSAL_SHARE * outside.length;
  return [
    info(
      "refusals (503) under fire",
      `${refused.length} of ${answers.length} answers (${share(refused.length, answers.length)})${byReason.length ? `: ${byReason.join(", ")}` : ""}`,
    ),
    {
      label: "refusals (503) outside the fault windows",
      value: `${refusedOutside.length} of ${outside.length} answers (${share(refusedOutside.length, outside.length)})${judged ? "" : ": too few to judge"}`,
      expected: `≤ ${MAX_REFUSAL_SHARE * 100} % (of ≥ ${MIN_ANSWERS_FOR_REFUSAL_BOUND} answers)`,
      ok: judged ? ok : null,
      offenders: ok
        ? []
        : [
            `${share(refusedOutside.length, outside.length)} of the answers outside the fault windows were refusals: the machine is too busy for this load, and the run proves little`,
          ],
    },
  ];
}

/** " (Retry-After 1–30 s)", or "" when none was given. */
function retryAfterRange(waits: number[]): string {
  if (waits.length === 0) return "";
  const [low, high] = [Math.min(...waits), Math.max(...waits)];
  return ` (Retry-After ${low === high ? low : `${low}–${high}`} s)`;
}

function ordersPerIntent(
  intents: Intent[],
  ordersByIntent: Map<string, DatabaseFacts["orders"]>,
): CheckRow {
  const known = new Set(intents.map(intentName));
  const offenders: string[] = [];
  for (const i of intents) {
    const n = ordersByIntent.get(intentName(i))?.length ?? 0;
    if (i.final === 200 ? n !== 1 : n > 1)
      offenders.push(`${intentName(i)}: ${n} orders${i.final === 200 ? " (answered 200)" : ""}`);
  }
  for (const [name, orders] of ordersByIntent)
    if (!known.has(name))
      offenders.push(`${name}: ${orders.length} order(s) for no intent of this run`);
  return row(
    "orders per intent",
    "1 per answered intent, ≤ 1 otherwise",
    offenders,
    offenders.length ? `${offenders.length} intents off` : "as expected",
  );
}

function sameOrderInEveryAnswer(
  intents: Intent[],
  ordersByIntent: Map<string, DatabaseFacts["orders"]>,
): CheckRow {
  const offenders: string[] = [];
  for (const i of intents) {
    if (i.orderIds.length === 0) continue;
    const ids = new Set(i.orderIds);
    const stored = ordersByIntent.get(intentName(i)) ?? [];
    const storedIds = new Set(stored.map((o) => o.id));
    if (ids.size !== 1 || ![...ids].every((id) => storedIds.has(id))) {
      offenders.push(
        `${intentName(i)}: answered ${[...ids].join(", ")}; stored ${[...storedIds].join(", ") || "none"}`,
      );
    }
  }
  return row("the same order id in every answer of an intent", "0 intents differ", offenders);
}

function chargesPerPaidOrder(facts: DatabaseFacts): CheckRow {
  const offenders: string[] = [];
  let paid = 0;
  for (const o of facts.orders) {
    if (o.status === "PAID") paid++;
    if (o.status === "PAID" ? o.charges !== 1 : o.charges !== 0)
      offenders.push(`order ${o.id} (${o.tenantId}/${o.key}, ${o.status}): ${o.charges} charges`);
  }
  return row(
    "charges per paid order",
    "exactly 1 (0 for unpaid orders)",
    offenders,
    offenders.length ? `${offenders.length} off` : `1 for each of ${paid} paid orders`,
  );
}

/**
 * An order id a client was answered 200 with is a promise: after any failover it must still be in
 * the database. (A failover that loses the last commits before a standby had them breaks it: the
 * asynchronous demonstration.)
 */
function acknowledgedOrdersKept(intents: Intent[], facts: DatabaseFacts): CheckRow {
  const stored = new Set(facts.orders.map((o) => o.id));
  const offenders: string[] = [];
  for (const i of intents) {
    for (const id of new Set(i.orderIds))
      if (!stored.has(id))
        offenders.push(
          `${intentName(i)}: answered 200 with order ${id}, which the database no longer has`,
        );
  }
  return row(LOST_ORDERS, "0", offenders);
}

/** Money the provider took (its own books) for an order the shop does not have. */
function chargesWithoutOrder(facts: DatabaseFacts): CheckRow {
  return row(
    "charges without their order (the provider's books)",
    "0",
    facts.orphanCharges.map((c) => `charge ${c}: no such order`),
  );
}

/**
 * One cart, one payment: the provider's charges for every order an intent ever had (answered or
 * stored). An intent whose order was lost and placed again shows its two charges here, although
 * each order has exactly one.
 */
function chargesPerIntent(
  intents: Intent[],
  ordersByIntent: Map<string, DatabaseFacts["orders"]>,
  facts: DatabaseFacts,
): CheckRow {
  const chargesByOrder = new Map<string, string[]>();
  for (const c of facts.charges)
    chargesByOrder.set(c.reference, [...(chargesByOrder.get(c.reference) ?? []), c.id]);
  const offenders: string[] = [];
  for (const i of intents) {
    const orderIds = new Set([
      ...i.orderIds,
      ...(ordersByIntent.get(intentName(i)) ?? []).map((o) => o.id),
    ]);
    const charges = [...orderIds].flatMap((id) => chargesByOrder.get(id) ?? []);
    if (charges.length > 1)
      offenders.push(
        `${intentName(i)}: ${charges.length} charges (${charges.join(", ")}) for orders ${[...orderIds].join(", ")}`,
      );
  }
  return row("duplicate charges (an intent charged more than once)", "0", offenders);
}

function stockArithmetic(facts: DatabaseFacts, initial: Map<string, number>): CheckRow {
  const offenders: string[] = [];
  for (const [productId, before] of initial) {
    const f = facts.stock.get(productId);
    if (!f) offenders.push(`product ${productId}: gone`);
    else if (before - f.sold !== f.now || f.now < 0)
      offenders.push(`product ${productId}: ${before} − ${f.sold} sold ≠ ${f.now} in stock`);
  }
  return row(
    "stock arithmetic (before − sold = now, never < 0)",
    "holds for every product",
    offenders,
    offenders.length ? `${offenders.length} products off` : "holds",
  );
}

function outboxDrained(facts: DatabaseFacts): CheckRow {
  const offenders = facts.undrainedOutbox.map(
    (m) => `outbox ${m.id} (order ${m.aggregateId}): ${m.status}`,
  );
  for (const o of facts.orders)
    if (o.outboxRows !== 1) offenders.push(`order ${o.id}: ${o.outboxRows} outbox rows`);
  return row("outbox rows neither delivered nor dead-lettered with a reason", "0", offenders);
}

function answersWith(status: number, run: RunFigures): CheckRow {
  const count = run.requests.filter((r) => r.seen === status).length;
  const offenders = run.intents.filter((i) => i.statuses.includes(status)).map(intentName);
  const label = status === 500 ? "answers with status 500" : "answers 422 (same key, same cart)";
  return { ...row(label, "0", offenders, String(count)), ok: count === 0 };
}

function underFire(run: RunFigures): CheckRow[] {
  const during = run.requests.filter((r) => r.t < run.fireEndsAt && typeof r.seen === "number");
  const ms = during.map((r) => r.ms).sort((a, b) => a - b);
  const seconds = run.fireEndsAt / 1000;
  const okPerSecond =
    run.intents.filter((i) => i.final === 200 && (i.endedAt ?? Infinity) < run.fireEndsAt).length /
    seconds;
  return [
    info(
      "throughput under fire",
      `${(during.length / seconds).toFixed(1)} answers/s, ${okPerSecond.toFixed(1)} intents answered 200/s`,
    ),
    info(
      "latency under fire (p50 / p99)",
      ms.length
        ? `${percentile(ms, 50).toFixed(0)} ms / ${percentile(ms, 99).toFixed(0)} ms`
        : "no answer",
    ),
  ];
}

export const passed = (rows: CheckRow[]) => rows.every((r) => r.ok !== false);

export const LOST_ORDERS = "acknowledged orders lost (answered 200, then gone)";
export const FOUND_BY_RECONCILIATION = "charges without their order, found by reconciliation";
