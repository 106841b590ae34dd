// What one request costs the server, route by route: the CPU time (read from /proc) an instance of
// the production build spends per request on each of its routes, beside the floor server (bare
// node:http + pg: static JSON, and the same checkout by hand), all at the same concurrency from
// the same client. It says how much of a paid order's server CPU is the framework's per-request
// work rather than the checkout's (a checkout and its webhook are two requests through Next.js),
// and what a new key costs against a replay. The instance measured receives no webhooks but those
// sent here (the provider posts to another instance), so each route's figure is that route's
// alone. PostgreSQL's CPU is not split by route here: the payment worker charges the orders the
// checkouts write meanwhile (a paid order's whole cost is order-cost.ts's).
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import { signatureHeader, WEBHOOK_PATH, EventType } from "../../../src/payments";
import { cpuMsOf } from "./cpu";
import { BENCH_WEBHOOK_SECRET } from "./cluster";
import { settle } from "./pace";
import type { RefusingInstance } from "./refusing";
import { checkoutHeaders, orderBody, PROTECTED_PATH } from "./scenarios";
import { PRISMA_FLOOR_PATH } from "./floor-paths";
import { BARE_CATALOG_PATH } from "./bare-trpc-route";

const CONNECTIONS = 8;
const WARM_UP = 200;
const ROUNDS = 4;

interface Call {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RouteCost {
  route: string;
  requests: number;
  serverMs: number;
  /** A baseline build's route that does not answer as this build's does: not measured, and why. */
  skipped?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

/** One request, its body read; no Accept-Encoding (as autocannon), so nothing is compressed. */
function call(port: number, c: Call): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method: c.method, path: c.path, headers: c.headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    req.end(c.body);
  });
}

/** `count` calls from `next`, `CONNECTIONS` at a time; each answer must have `status`. */
async function drive(
  port: number,
  count: number,
  next: () => Call,
  status: number,
  seen?: (body: string) => void,
): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (i < count) {
        i++;
        const c = next();
        const answer = await call(port, c);
        if (answer.status !== status)
          throw new Error(
            `route cost: ${c.method} ${c.path} answered ${answer.status}: ${answer.body.slice(0, 200)}`,
          );
        seen?.(answer.body);
      }
    }),
  );
}

export interface RouteTarget {
  /** The Next.js instance measured, and its process. */
  port: number;
  pid: number;
  /** The floor server: its /api/health is static JSON on bare node:http. */
  floor: { port: number; pid: number };
  /** Another floor server, for the floor with its transaction in Prisma's alone. */
  prismaFloor: { port: number; pid: number };
  /** Another build (`--baseline DIR`): its routes measured in the same rounds, for an A/B. */
  baseline?: { port: number; pid: number };
  /** An instance of this build whose API refuses every request at the door (refusing.ts). */
  refusing?: { port: number; pid: number; instance: RefusingInstance };
  productId: string;
}

const checkoutCall = (productId: string, key: string = randomUUID()): Call => ({
  method: "POST",
  path: PROTECTED_PATH,
  headers: checkoutHeaders(key),
  body: orderBody(productId),
});

/** A signed charge.succeeded event for an order, as the provider sends it. */
function webhookCall(order: { id: string; totalCents: number }): Call {
  const body = JSON.stringify({
    id: `evt_${randomBytes(12).toString("hex")}`,
    type: EventType.SUCCEEDED,
    data: {
      chargeId: `ch_${randomBytes(8).toString("hex")}`,
      reference: order.id,
      amountCents: order.totalCents,
      currency: "EUR",
      status: "succeeded",
    },
  });
  return {
    method: "POST",
    path: WEBHOOK_PATH,
    headers: {
      "content-type": "application/json",
      "simpay-signature": signatureHeader(BENCH_WEBHOOK_SECRET, body, Date.now() / 1000),
    },
    body,
  };
}

interface Route {
  route: string;
  /** Before each drive of this route (the refusals: every place held first). */
  before?: () => Promise<void>;
  /** This many times the requests of the others (a cheap route: see TIMES). */
  times: number;
  /** A baseline build's route: one it answers otherwise (an older build) is skipped, not fatal. */
  lenient?: boolean;
  port: number;
  pid: number;
  next: (i: number) => Call;
  status: number;
  seen?: (body: string) => void;
}

type Order = { id: string; totalCents: number };

/** The label of a baseline build's row: the same route, on the other build. */
const onBaseline = (route: string) => `the baseline build: ${route}`;

/**
 * One Next.js instance's routes. `orders` fills as its new-key checkouts answer; the webhook after
 * them sends one event per order.
 */
function nextRoutes(
  instance: { port: number; pid: number },
  productId: string,
  replayKey: string,
  label: (route: string) => string,
  lenient = false,
): Route[] {
  const orders: Order[] = [];
  const route = (name: string, next: Route["next"], status = 200, seen?: Route["seen"]): Route => ({
    route: label(name),
    times: timesOf(name),
    lenient,
    ...instance,
    next,
    status,
    ...(seen ? { seen } : {}),
  });
  const keepOrder = (body: string) =>
    orders.push((JSON.parse(body) as { result: { data: { order: Order } } }).result.data.order);
  return [
    route(NOT_FOUND, () => ({ method: "GET", path: "/api/no-such-route" }), 404),
    route("GET /api/health (the background probe's status)", () => ({
      method: "GET",
      path: "/api/health",
    })),
    route("GET / (a page prerendered at build)", () => ({ method: "GET", path: "/" })),
    route("GET /signin (a page rendered per request)", () => ({ method: "GET", path: "/signin" })),
    route(CATALOG, () => ({
      method: "GET",
      path: "/api/trpc/catalog.list",
    })),
    route(REPLAY, () => checkoutCall(productId, replayKey)),
    route(NEW_KEY, () => checkoutCall(productId), 200, keepOrder),
    route(WEBHOOK, (i) => webhookCall(orders[i]!)),
  ];
}

/**
 * The routes measured, in order: the floor's, this build's, and with a baseline build the same
 * routes on it, so both instances have the same history (an instance that served fewer kinds of
 * request is less warmed up: in an A/A run, one that served only checkouts spent 40–65 % more CPU
 * on each).
 */
function routesOf(t: RouteTarget, keys: { app: string; floor: string; baseline: string }): Route[] {
  const floor = (route: string, next: Route["next"], server = t.floor): Route => ({
    route,
    times: timesOf(route),
    port: server.port,
    pid: server.pid,
    next,
    status: 200,
  });
  return [
    floor(BARE, () => ({
      method: "GET",
      path: "/api/health",
    })),
    floor(FLOOR_CATALOG, () => ({ method: "GET", path: "/api/trpc/catalog.list" })),
    floor(FLOOR_NEW_KEY, () => checkoutCall(t.productId)),
    floor(FLOOR_REPLAY, () => checkoutCall(t.productId, keys.floor)),
    floor(
      FLOOR_PRISMA_NEW_KEY,
      () => ({ ...checkoutCall(t.productId), path: PRISMA_FLOOR_PATH }),
      t.prismaFloor,
    ),
    ...nextRoutes(t, t.productId, keys.app, (route) => route),
    floor(BARE_CATALOG, () => ({ method: "GET", path: BARE_CATALOG_PATH }), t),
    ...(t.refusing ? [refusalRoute(t.refusing)] : []),
    ...(t.baseline ? nextRoutes(t.baseline, t.productId, keys.baseline, onBaseline, true) : []),
  ];
}

/**
 * A catalog read refused at the door (503 store_busy, no body, the connection kept), on an
 * instance whose places are all held.
 */
function refusalRoute(refusing: NonNullable<RouteTarget["refusing"]>): Route {
  return {
    route: REFUSAL,
    port: refusing.port,
    pid: refusing.pid,
    before: () => refusing.instance.hold(),
    times: timesOf(REFUSAL),
    // A hold that did not hold (a read served) leaves the route unmeasured, with the answer seen.
    lenient: true,
    next: () => ({ method: "GET", path: "/api/trpc/catalog.list" }),
    status: 503,
  };
}

const BARE = "bare node:http, static JSON (the floor server's /api/health)";
const FLOOR_CATALOG = "bare node:http + pg: catalog.list by hand (one SELECT)";
const FLOOR_NEW_KEY = "the floor: checkout, a new key";
const FLOOR_REPLAY = "the floor: checkout, a replay (from the store)";
const FLOOR_PRISMA_NEW_KEY =
  "the floor with its transaction in Prisma's (the order and the completion): a new key";
const NOT_FOUND = "Next.js: a path with no route (404)";
const CATALOG = "catalog.list (a tRPC query, one SELECT)";
const REFUSAL = "a refusal at the door (503 store_busy, catalog.list refused)";
const BARE_CATALOG =
  "the same SELECT as the least tRPC query (tRPC's fetch handler behind the front door, nothing else)";
const REPLAY = "checkout.placeOrder, a replay (from memory)";
const NEW_KEY = "checkout.placeOrder, a new key";
const WEBHOOK = "the payment webhook, a new event";

/**
 * How many times the requests of the others a cheap route gets. /proc counts CPU in 10 ms ticks:
 * 200 answers of bare node:http (~0.05 ms each) read as one tick, give or take one; and a round
 * carries a fixed cost of its own (its connections, idle past the server's keep-alive timeout
 * while the other routes ran, accepted again), of which a few requests would each carry a share.
 * With these, each route's round reads some 20 ticks or more. A new-key checkout and the webhook
 * keep one: the webhook's n-th event pays the n-th order.
 */
const TIMES: Record<string, number> = {
  [BARE]: 20,
  [FLOOR_CATALOG]: 8,
  [FLOOR_REPLAY]: 4,
  [CATALOG]: 2,
  [BARE_CATALOG]: 2,
  [REPLAY]: 2,
  [REFUSAL]: 40,
};
const timesOf = (route: string) => TIMES[route] ?? 1;

/**
 * Every route warmed up, then measured in `ROUNDS` rounds over all of them in turn, so a moment of
 * machine noise falls on every route alike rather than on one.
 */
export async function measureRouteCosts(t: RouteTarget, requests: number): Promise<RouteCost[]> {
  const keys = {
    app: `route-cost-${randomUUID()}`,
    floor: `route-cost-${randomUUID()}`,
    baseline: `route-cost-${randomUUID()}`,
  };
  await call(t.port, checkoutCall(t.productId, keys.app));
  await call(t.floor.port, checkoutCall(t.productId, keys.floor));
  if (t.baseline) await call(t.baseline.port, checkoutCall(t.productId, keys.baseline));
  const routes = routesOf(t, keys).map((route) => ({
    ...route,
    sent: 0,
    cpuMs: 0,
    skipped: undefined as string | undefined,
  }));
  // Each route's calls are numbered across warm-up and rounds: the webhook's n-th event is for
  // the n-th order the checkouts made (they run before it in every round, as many times).
  const next = (r: (typeof routes)[number]) => () => r.next(r.sent++);
  for (const r of routes) {
    await r.before?.();
    await drive(r.port, WARM_UP * r.times, next(r), r.status, r.seen).catch((error: Error) => {
      if (!r.lenient) throw error;
      r.skipped = error.message.replace(/^route cost: /, "").replace(/\s+/g, " ");
    });
  }
  const measuredRoutes = routes.filter((r) => !r.skipped);
  const perRound = Math.ceil(requests / ROUNDS);
  for (let round = 0; round < ROUNDS; round++)
    for (const r of measuredRoutes) {
      await r.before?.();
      await settle([r.pid]);
      const server0 = cpuMsOf([r.pid]);
      await drive(r.port, perRound * r.times, next(r), r.status, r.seen);
      r.cpuMs += cpuMsOf([r.pid]) - server0;
    }
  agent.destroy();
  return routes.map((r) => ({
    route: r.route,
    requests: perRound * ROUNDS * r.times,
    serverMs: r.cpuMs / (perRound * ROUNDS * r.times),
    ...(r.skipped ? { skipped: r.skipped } : {}),
  }));
}

/** A route's server CPU ms a request; undefined if it was not measured. */
function msOf(costs: readonly RouteCost[], route: string): number | undefined {
  return costs.find((c) => c.route === route && !c.skipped)?.serverMs;
}

export function checkoutCpu(costs: readonly RouteCost[]): { newKey: number; replay: number } {
  return { newKey: msOf(costs, NEW_KEY)!, replay: msOf(costs, REPLAY)! };
}

export function routeCostMarkdown(costs: RouteCost[]): string {
  const ms = (route: string) => msOf(costs, route)!;
  const bare = costs[0]!.serverMs;
  const framework = ms(NOT_FOUND);
  const floorNew = ms(FLOOR_NEW_KEY);
  return [
    `Each route in ${ROUNDS} rounds over all routes, after a warm-up (${WARM_UP} requests, as many times more for a cheap route); ${CONNECTIONS} connections, no compression; the server's CPU from /proc. /proc counts in 10 ms ticks, so a route that costs little gets more requests.`,
    "",
    "| route | requests | server CPU ms / request | ÷ bare node:http |",
    "|---|---:|---:|---:|",
    ...costs.map((c) =>
      c.skipped
        ? `| ${c.route} | | not measured: ${c.skipped.replace(/\|/g, "\\|")} | |`
        : `| ${c.route} | ${c.requests} | ${c.serverMs.toFixed(2)} | ${(c.serverMs / bare).toFixed(1)} |`,
    ),
    "",
    ...goalLines(costs),
    `- A new key ÷ a replay, server CPU: **${(ms(NEW_KEY) / ms(REPLAY)).toFixed(2)}×** (the floor: ${(floorNew / ms(FLOOR_REPLAY)).toFixed(2)}×).`,
    ...baselineLines(costs),
    `- A paid order's two requests through Next.js (its checkout and its webhook): **${(ms(NEW_KEY) + ms(WEBHOOK)).toFixed(2)} ms** of server CPU, of which Next.js's own per-request work (the 404's) is ${(2 * framework).toFixed(2)} ms; the floor's checkout ${floorNew.toFixed(2)} ms.`,
  ].join("\n");
}

/**
 * The route goals, each against its floor in the same rounds: a new-key checkout ≤ 2× the
 * checkout by hand, a catalog read ≤ 3× the read by hand, a refusal ≤ 0.1× a served catalog read
 * (and, as the least any answer costs, against bare node:http's static answer). Then the floors of
 * the stack the design names, measured or summed from measured parts: the least tRPC query, and
 * Prisma's transaction plus what tRPC adds to a request.
 */
function goalLines(costs: RouteCost[]): string[] {
  const [bare, newKey, floorNew, catalog, floorCatalog, refusal] = [
    costs[0]!.route,
    NEW_KEY,
    FLOOR_NEW_KEY,
    CATALOG,
    FLOOR_CATALOG,
    REFUSAL,
  ].map((route) => msOf(costs, route));
  const ratio = (a?: number, b?: number) =>
    a === undefined || b === undefined ? "not measured" : `${(a / b).toFixed(2)}×`;
  const floorPrisma = msOf(costs, FLOOR_PRISMA_NEW_KEY);
  const bareTrpc = msOf(costs, BARE_CATALOG);
  // The least a checkout on the design's stack costs: Prisma's floor, plus what tRPC's handler
  // behind the door adds to a request (the least tRPC query over the same read by hand).
  const stackFloor =
    floorPrisma === undefined || bareTrpc === undefined || floorCatalog === undefined
      ? undefined
      : floorPrisma + bareTrpc - floorCatalog;
  return [
    `- **Goals.** A new-key checkout ÷ the checkout by hand: **${ratio(newKey, floorNew)}** (goal ≤ 2×). A catalog read ÷ the read by hand: **${ratio(catalog, floorCatalog)}** (goal ≤ 3×). A refusal ÷ a served catalog read: **${ratio(refusal, catalog)}** (goal ≤ 0.1×); a refusal ÷ bare node:http's static answer (the least an answer costs): ${ratio(refusal, bare)}.`,
    `- **Where the checkout's cost is.** The checkout by hand with its transaction in Prisma's interactive transaction (as the design gives the handler one) ÷ the checkout by hand: **${ratio(floorPrisma, floorNew)}**; the new-key checkout through the app ÷ that floor: **${ratio(newKey, floorPrisma)}** (the rest: the front door, tRPC, the engine).`,
    `- **The stack's floors.** The same SELECT as the least tRPC query (tRPC's fetch handler behind the front door, with no context, middleware or door of the app's) ÷ the read by hand: **${ratio(bareTrpc, floorCatalog)}**; the app's catalog read ÷ that: **${ratio(catalog, bareTrpc)}**. Prisma's floor plus what that tRPC query adds to the read by hand (${stackFloor === undefined ? "not measured" : `${stackFloor.toFixed(2)} ms`}, the least a checkout on this stack costs) ÷ the checkout by hand: **${ratio(stackFloor, floorNew)}**; the new-key checkout through the app ÷ that: **${ratio(newKey, stackFloor)}**.`,
  ];
}

/** With a baseline build measured: this build's checkout against it, in the same rounds. */
function baselineLines(costs: RouteCost[]): string[] {
  const [newKey, baseNew, baseReplay] = [NEW_KEY, onBaseline(NEW_KEY), onBaseline(REPLAY)].map(
    (route) => msOf(costs, route),
  );
  if (newKey === undefined || baseNew === undefined || baseReplay === undefined) return [];
  return [
    `- The baseline build in the same rounds: a new key ÷ a replay **${(baseNew / baseReplay).toFixed(2)}×**; this build's new key ÷ the baseline's **${(newKey / baseNew).toFixed(2)}×** (${(newKey - baseNew).toFixed(2)} ms).`,
  ];
}
