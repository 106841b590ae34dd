// The shoppers: each client places its own carts, one Idempotency-Key per cart (an intent), and
// pursues each intent until it has a final answer: it drops answers at random after sending and
// sends again with the same key, honours Retry-After on 409/503/429, backs off on gateway errors.
// Some intents ask for a slow checkout (longer than HAProxy's server timeout), and some answered
// intents are sent once more a few seconds later (a reload), after the operator may have busted
// them.
import { setTimeout as sleep } from "node:timers/promises";
import { exchange, retryAfterSeconds } from "./http";
import { seededRandom, type CartLine, type Intent, type Recorder } from "./record";

export const TOKENS: Record<string, string> = {
  acme: "acme_demo_token",
  globex: "globex_demo_token",
};

export interface ClientOptions {
  port: number;
  runId: string;
  products: { id: string; sku: string }[];
  dropRate: number;
  slowRate: number;
  slowMs: number;
  resendRate: number;
  /** No new intent after this (ms since start). */
  fireEndsAt: number;
  /** No request at all after this: intents still unanswered stay open. */
  settleEndsAt: number;
  /** Shared request budget: stops everyone when spent. */
  budget: { left: number };
  seed: number;
}

/** A final answer: a success, or a refusal the engine stored and replays. */
const FINAL = new Set([200, 400, 401, 403, 404, 412, 413, 422]);

export async function runClient(index: number, o: ClientOptions, rec: Recorder): Promise<void> {
  const random = seededRandom(o.seed * 1000 + index);
  const tenant = index % 2 === 0 ? "acme" : "globex";
  const resends: { at: number; intent: Intent }[] = [];
  let n = 0;
  while (rec.now() < o.fireEndsAt && o.budget.left > 0) {
    const due = resends.findIndex((r) => r.at <= rec.now());
    if (due >= 0) {
      const intent = resends.splice(due, 1)[0]!.intent;
      intent.resent = true;
      await pursue(intent, o, rec, random);
      continue;
    }
    const intent = newIntent(rec, tenant, `soak-${o.runId}-c${index}-n${n++}`, o, random);
    await pursue(intent, o, rec, random);
    if (intent.final === 200 && random() < o.resendRate)
      resends.push({ at: rec.now() + 2_000 + random() * 6_000, intent });
  }
}

function newIntent(
  rec: Recorder,
  tenant: string,
  key: string,
  o: ClientOptions,
  random: () => number,
): Intent {
  const plenty = o.products.filter((p) => p.sku !== "SOAK-SCARCE");
  const lines = new Map<string, number>();
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) {
    const p = plenty[Math.floor(random() * plenty.length)]!;
    lines.set(p.id, (lines.get(p.id) ?? 0) + 1 + Math.floor(random() * 3));
  }
  const scarce = o.products.find((p) => p.sku === "SOAK-SCARCE");
  if (scarce && random() < 0.1) lines.set(scarce.id, 1);
  const items: CartLine[] = [...lines].map(([productId, quantity]) => ({ productId, quantity }));
  const intent: Intent = {
    id: rec.intents.length,
    tenant,
    key,
    items,
    slow: random() < o.slowRate,
    startedAt: rec.now(),
    orderIds: [],
    statuses: [],
    attempts: 0,
    resent: false,
  };
  rec.intents.push(intent);
  return intent;
}

/**
 * Sends the intent until it has a final answer, or the settle time is over (then it stays open).
 */
async function pursue(
  intent: Intent,
  o: ClientOptions,
  rec: Recorder,
  random: () => number,
): Promise<void> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    authorization: `Bearer ${TOKENS[intent.tenant]}`,
    "idempotency-key": intent.key,
  };
  if (intent.slow) headers["x-demo-delay-ms"] = String(o.slowMs);
  const body = JSON.stringify({ items: intent.items });
  for (let attempt = 1; rec.now() < o.settleEndsAt && o.budget.left > 0; attempt++) {
    o.budget.left--;
    intent.attempts++;
    const dropAfterMs = random() < o.dropRate ? Math.floor(random() * 300) : undefined;
    const t = rec.now();
    const result = await exchange({
      port: o.port,
      method: "POST",
      path: "/api/trpc/checkout.placeOrder",
      headers,
      body,
      dropAfterMs,
      timeoutMs: 30_000,
    });
    const ms = rec.now() - t;
    if (result.kind !== "answer") {
      rec.requests.push({ t, ms, seen: result.kind });
      await sleep(Math.min(2_000, 50 * attempt)); // the link's retry after a network error
      continue;
    }
    const { status, headers: h } = result.answer;
    const retryAfter = retryAfterSeconds(h);
    rec.requests.push(
      status === 503
        ? { t, ms, seen: status, reason: refusalReason(result.answer.body), retryAfter }
        : { t, ms, seen: status },
    );
    intent.statuses.push(status);
    if (status === 200) intent.orderIds.push(orderIdOf(result.answer.body));
    if (FINAL.has(status)) {
      intent.final = status;
      intent.endedAt ??= rec.now(); // a resend does not reopen the intent in the chart
      return;
    }
    await sleep(
      retryAfter !== undefined ? Math.max(retryAfter * 1000, 100) : Math.min(2_000, 100 * attempt),
    );
  }
}

/**
 * A 503's reason: the app's (tRPC error data, or a plain error's), else the load balancer's
 * (HAProxy answers in HTML).
 */
function refusalReason(body: string): string {
  try {
    const json = JSON.parse(body) as {
      error?: {
        data?: { reason?: unknown };
        json?: { data?: { reason?: unknown } };
        reason?: unknown;
      };
      reason?: unknown;
    };
    const reason =
      json.error?.data?.reason ??
      json.error?.json?.data?.reason ??
      json.error?.reason ??
      json.reason;
    return typeof reason === "string" ? reason : "no reason in the body";
  } catch {
    return "not from the app (HAProxy: no server up)";
  }
}

function orderIdOf(body: string): string {
  try {
    const id = (JSON.parse(body) as { result?: { data?: { order?: { id?: unknown } } } }).result
      ?.data?.order?.id;
    return typeof id === "string" ? id : "(no order id in the answer)";
  } catch {
    return "(unparseable answer)";
  }
}
