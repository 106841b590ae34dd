// `npm run bench:http`: what idempotency costs through HTTP. The production build (`next start`) on
// an embedded PostgreSQL, loaded by autocannon with the same checkout four ways (control without
// the engine, new keys, replays, concurrent duplicates) at 1–256 connections, every cell in short
// slices interleaved with all others so machine noise falls on all alike; then the payments
// backlog, 1–3 instances on one database, a CPU profile, and the bytes a stored key takes.
// Prints Markdown and writes it to lab/bench/results/http-latest.md.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Pool } from "pg";
import {
  ensureBuild,
  ROOT,
  startDatabase,
  startFloorServer,
  startInstance,
  startWorkerProcess,
  type Database,
  type Instance,
} from "./cluster";
import { mergeSlices, runSlice, type Slice, type Target } from "./load";
import { outboxCounts, paymentsMarkdown, timeDrain, type PaymentsReport } from "./payments";
import { parsePlan, type Plan } from "./options";
import { Pace, settle } from "./pace";
import { checkoutTable, goals, goalsMarkdown, instancesTable, type Cells } from "./report";
import { assertControlServed, completeKey, SCENARIOS, type Scenario } from "./scenarios";
import { storageMarkdown, measureStorage } from "./storage";
import { orderProfileMarkdown, profileUnderLoad } from "./profile-run";
import { measureOrderCost, orderCostMarkdown, type OrderCost } from "./order-cost";
import { checkoutCpu, measureRouteCosts, routeCostMarkdown, type RouteCost } from "./route-cost";
import { RefusingInstance, REFUSING_ENV } from "./refusing";
import { runBench, type Step } from "../fail";

let step: Step = (msg) => process.stderr.write(`[bench:http] ${msg}\n`);
const log = (msg: string) => step(msg);

/** The paths this run measures: the baseline and its pair only when there is one. */
const scenariosOf = (target: Target) =>
  SCENARIOS.filter((s) => (s !== "baseline" && s !== "paired") || target.elsewhere?.baseline);

/**
 * Each slice starts the scenario order one further, so no path is always first or last. A rotation
 * keeps each path's predecessor, so every slice also starts from a quiet machine (quiet).
 */
const rotated = (list: readonly Scenario[], by: number) =>
  list.map((_, i) => list[(i + by) % list.length]!);

/** Every server the run started, wherever its scenario is sent. */
const allPids = (target: Target) => [
  ...target.pids,
  ...Object.values(target.elsewhere ?? {}).map((e) => e.pid),
];

/**
 * No payment left from the slice before, and every server idle again. A slice that started on
 * another's backlog would share the machine with that slice's payments: measured, a baseline
 * build's instance of the very same code served 0.5× the checkouts a second at 16–64 connections
 * when its slices always followed the floor's.
 */
async function quiet(pool: Pool, target: Target, plan: Plan): Promise<void> {
  await timeDrain(pool, plan.drainLimitSeconds);
  await settle(allPids(target));
}

async function measureCheckout(pool: Pool, target: Target, plan: Plan, pace: Pace): Promise<Cells> {
  const cells: Cells = new Map(plan.connections.map((c) => [c, new Map<Scenario, Slice>()]));
  for (let s = 0; s < plan.slices; s++) {
    for (const [ci, connections] of plan.connections.entries()) {
      log(`slice ${s + 1}/${plan.slices}, ${connections} connections`);
      for (const scenario of rotated(scenariosOf(target), s + ci)) {
        await quiet(pool, target, plan);
        const key = `${scenario}@${connections}`;
        const slice = await runSlice(
          target,
          scenario,
          connections,
          pace.amount(key, scenario, connections),
        );
        pace.record(key, slice);
        const row = cells.get(connections)!;
        row.set(scenario, mergeSlices(row.get(scenario), slice));
      }
    }
  }
  return cells;
}

async function measureInstances(
  db: Database,
  first: Instance,
  plan: Plan,
  replayKey: string,
  workerPids: number[],
): Promise<Map<number, Slice>> {
  const more: Instance[] = [];
  try {
    for (let i = 1; i < plan.maxInstances; i++)
      more.push(
        await startInstance({
          port: plan.basePort + i,
          databaseUrl: db.url,
          providerUrl: db.providerUrl,
          paymentJobs: !plan.paymentsProcess,
        }),
      );
    const all = [first, ...more];
    const pids = [...all.map((i) => i.pid), ...workerPids];
    const target = (n: number): Target => ({
      ports: all.slice(0, n).map((i) => i.port),
      pids,
      dbPid: db.pid,
      productId: db.productId,
      replayKey,
    });
    const pace = new Pace(plan.sliceSeconds);
    // Warm the new instances (and learn the rate to size the slices by).
    pace.record(
      "warm",
      await runSlice(target(all.length), "new keys", plan.scaleConnections, {
        seconds: plan.quick ? 1 : 2,
      }),
    );
    await settle(pids);
    const rows = new Map<number, Slice>();
    for (let s = 0; s < plan.slices; s++) {
      for (let k = 0; k < all.length; k++) {
        const n = ((s + k) % all.length) + 1;
        log(`instances: slice ${s + 1}/${plan.slices}, ${n} instance(s)`);
        const slice = await runSlice(
          target(n),
          "new keys",
          plan.scaleConnections,
          pace.amount(`n${n}`, "warm", plan.scaleConnections),
        );
        pace.record(`n${n}`, slice);
        rows.set(n, mergeSlices(rows.get(n), slice));
      }
    }
    return new Map([...rows.entries()].sort(([a], [b]) => a - b));
  } finally {
    for (const instance of more) await instance.stop();
  }
}

/** Runs every path for a moment (JIT, pools, caches) and learns its rate for sizing the slices. */
async function warm(target: Target, plan: Plan): Promise<Pace> {
  log("warming up every path");
  const pace = new Pace(plan.sliceSeconds);
  const seconds = plan.quick ? 1 : 2;
  for (const scenario of scenariosOf(target)) {
    pace.record(scenario, await runSlice(target, scenario, 16, { seconds }));
    await settle(target.pids);
  }
  for (const scenario of ["baseline", "paired"] as const)
    await warmAsFirst(target, scenario, seconds);
  return pace;
}

/**
 * The baseline build's instance, and this build's instance paired with it, also get every path the
 * first instance serves, unmeasured, so that all have served the same kinds of requests: an
 * instance that served fewer kinds costs more CPU per request on those it did serve (route-cost.ts
 * has the A/A run that showed it). Even so the first instance, which also handles every webhook,
 * served 1.0–2.8× the checkouts a second of a baseline of the same build (an A/A run): the baseline
 * is compared with its pair, started and warmed alike.
 */
async function warmAsFirst(
  target: Target,
  scenario: "baseline" | "paired",
  seconds: number,
): Promise<void> {
  const server = target.elsewhere?.[scenario];
  if (!server) return;
  const asFirst: Target = { ...target, ports: [server.port], pids: [server.pid], elsewhere: {} };
  for (const path of scenariosOf(target).filter((s) => !target.elsewhere?.[s])) {
    await runSlice(asFirst, path, 16, { seconds });
    await settle([server.pid]);
  }
}

/**
 * Do the payments keep up with the checkouts? New keys at 16 connections for ten slices' time,
 * the outbox counted before and after, then the drain timed. A phase of its own: the checkout
 * slices each start without a backlog, so they cannot say.
 */
async function paymentsPhase(db: Database, target: Target, plan: Plan): Promise<PaymentsReport> {
  await quiet(db.pool, target, plan);
  const before = await outboxCounts(db.pool);
  const slice = await runSlice(target, "new keys", 16, { seconds: plan.sliceSeconds * 10 });
  const after = await outboxCounts(db.pool);
  log(`payments phase done; timing the payments drain (≤ ${plan.drainLimitSeconds} s)`);
  return {
    checkoutSeconds: slice.wallMs / 1000,
    created: after.total - before.total,
    deliveredDuringCheckout: after.delivered - before.delivered,
    drain: await timeDrain(db.pool, plan.drainLimitSeconds),
  };
}

const loadAtStart = os.loadavg()[0]!;

/**
 * The load averages say how much else the machine was doing: the absolute figures depend on it, the
 * ratios less.
 */
function header(plan: Plan): string {
  return (
    `once bench:http — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores ` +
    `(load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end), ` +
    `next start (production build) on embedded PostgreSQL, ` +
    (plan.paymentsProcess
      ? "payment jobs in a worker process of their own (its CPU counted with the server's); "
      : "payment jobs running in-process; ") +
    // The servers inherit this environment: DATABASE_PREPARED_STATEMENTS=0 measures without
    // preparation.
    (process.env.DATABASE_PREPARED_STATEMENTS === "0"
      ? "statements not prepared; "
      : "statements prepared; ") +
    `${plan.slices} interleaved slices × ${plan.sliceSeconds} s per cell${plan.quick ? " (--quick: too short to quote)" : ""}`
  );
}

/**
 * An instance beside the first, of this build or of the build in `root`: no payment jobs, and no
 * webhooks sent to it (the provider posts to the first).
 */
function startBeside(
  db: Database,
  port: number,
  root?: string,
  env?: Record<string, string>,
): Promise<Instance> {
  return startInstance({
    port,
    databaseUrl: db.url,
    providerUrl: db.providerUrl,
    paymentJobs: false,
    ...(root ? { root: path.resolve(root) } : {}),
    ...(env ? { env } : {}),
  });
}

/**
 * The routes' costs on an instance of their own, which the provider posts no webhooks to (they go
 * to the first), so each route's CPU is its own. With a baseline build, a fresh instance of it
 * beside, started the same way: two instances of the same age and history compare.
 */
async function routeCosts(db: Database, floor: { port: number; pid: number }, plan: Plan) {
  const instance = await startBeside(db, plan.basePort + plan.maxInstances + 3);
  const baseline = plan.baseline
    ? await startBeside(db, plan.basePort + plan.maxInstances + 4, plan.baseline)
    : undefined;
  // The floor with its transaction in Prisma's, in a process of its own: the garbage Prisma's
  // requests leave is collected on its CPU, not on the routes by hand measured after it.
  const prismaFloor = await startFloorServer(db.url, plan.basePort + plan.maxInstances + 7);
  // This build with every place held: what a refusal at the door costs (refusing.ts).
  const refusing = await startBeside(
    db,
    plan.basePort + plan.maxInstances + 6,
    undefined,
    REFUSING_ENV,
  );
  try {
    return await measureRouteCosts(
      {
        port: instance.port,
        pid: instance.pid,
        floor,
        prismaFloor,
        ...(baseline ? { baseline: { port: baseline.port, pid: baseline.pid } } : {}),
        refusing: {
          port: refusing.port,
          pid: refusing.pid,
          instance: new RefusingInstance(refusing.port, db.productId),
        },
        productId: db.productId,
      },
      plan.quick ? 100 : 800,
    );
  } finally {
    await instance.stop();
    await prismaFloor.stop();
    await baseline?.stop();
    await refusing.stop();
  }
}

/** Every server the measuring phases use, started together and stopped together. */
interface Servers {
  first: Instance;
  worker: ReturnType<typeof startWorkerProcess> | undefined;
  workerPids: number[];
  floor: Awaited<ReturnType<typeof startFloorServer>>;
  baseline: Instance | undefined;
  paired: Instance | undefined;
  /** Where the checkout scenarios go: the first instance, the floor, and any baseline pair. */
  target: Target;
}

/** The paid orders the order profile covers, and the window they took. */
type OrderWindow = { window: OrderCost["window"]; orders: number };

/**
 * The first instance (checked to serve the control and to hold a completed key for the replays),
 * the payment worker, the floor, and with --baseline the baseline build and its pair.
 */
async function startServers(
  db: Database,
  plan: Plan,
  orderProfileDir: string | null,
): Promise<Servers> {
  const first = await startInstance({
    port: plan.basePort,
    databaseUrl: db.url,
    providerUrl: db.providerUrl,
    paymentJobs: !plan.paymentsProcess,
    ...(orderProfileDir ? { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${orderProfileDir}`] } : {}),
  });
  const worker = plan.paymentsProcess ? startWorkerProcess(db.url, db.providerUrl) : undefined;
  const workerPids = worker ? [worker.pid] : [];
  const base = `http://127.0.0.1:${first.port}`;
  const replayKey = `replay-${randomUUID()}`;
  await assertControlServed(base, db.productId);
  await completeKey(base, db.productId, replayKey);
  const floor = await startFloorServer(db.url, plan.basePort + plan.maxInstances + 1);
  // The baseline build serves only its path, and this build's second instance only the same path
  // beside it; their payments wait in the outbox for this build's worker (same schema).
  const baseline = plan.baseline
    ? await startBeside(db, plan.basePort + plan.maxInstances + 2, plan.baseline)
    : undefined;
  const paired = plan.baseline
    ? await startBeside(db, plan.basePort + plan.maxInstances + 5)
    : undefined;
  const elsewhere = { floor, ...(baseline && paired ? { baseline, paired } : {}) };
  const target: Target = {
    ports: [first.port],
    pids: [first.pid, ...workerPids],
    dbPid: db.pid,
    productId: db.productId,
    replayKey,
    elsewhere,
  };
  return { first, worker, workerPids, floor, baseline, paired, target };
}

async function stopServers(servers: Servers): Promise<void> {
  await servers.first.stop();
  await servers.floor.stop();
  await servers.baseline?.stop();
  await servers.paired?.stop();
  await servers.worker?.stop();
}

/**
 * A paid order's cost on this build and on the floor, sized by the warm-up's new-key rate (two
 * slices' worth) unless --orders says how many.
 */
async function orderCosts(
  db: Database,
  plan: Plan,
  servers: Servers,
  pace: Pace,
): Promise<{ section: string[]; cost: OrderCost }> {
  log("a paid order's cost");
  const { target, first, floor, workerPids } = servers;
  const requests =
    plan.orders ??
    Math.round((pace.amount("new keys", "new keys", 16) as { requests: number }).requests * 2);
  const pools = { shop: db.pool, provider: db.providerPool };
  const cost = await measureOrderCost(
    pools,
    target,
    { server: [first.pid], worker: workerPids },
    16,
    requests,
  );
  // The floor's orders are paid by the same worker, and their webhooks handled by the app's
  // server: both counted as the floor's payment work.
  const floorCost = await measureOrderCost(
    pools,
    target,
    { server: [floor.pid], worker: [...workerPids, first.pid] },
    16,
    requests,
    "floor",
  );
  return {
    section: [
      "### What a paid order costs (server, payment worker, PostgreSQL)",
      orderCostMarkdown(cost, floorCost, 16),
    ],
    cost,
  };
}

/** The checkout table and its goals, the payments phase, then 1–N instances on one database. */
async function checkoutSections(
  db: Database,
  plan: Plan,
  servers: Servers,
  pace: Pace,
  costs: RouteCost[],
): Promise<string[]> {
  const cells = await measureCheckout(db.pool, servers.target, plan, pace);
  const payments = await paymentsPhase(db, servers.target, plan);
  return [
    "### Checkout through HTTP, one instance",
    checkoutTable(cells),
    "### Goals",
    goalsMarkdown(goals(cells, payments, checkoutCpu(costs))),
    "### Payments: new keys at 16 connections, then the backlog drained",
    paymentsMarkdown(payments),
    "### Instances on one PostgreSQL",
    instancesTable(
      await measureInstances(db, servers.first, plan, servers.target.replayKey, servers.workerPids),
      plan.scaleConnections,
    ),
  ];
}

const ROUTE_COST_HEADING = "### What one request costs the server, route by route";

/**
 * Everything measured while the servers run, in the order of the report: with --route-cost only
 * the routes; otherwise warm-up, order cost, routes, and (without --order-cost) the checkout.
 */
async function measureOnServers(
  db: Database,
  plan: Plan,
  servers: Servers,
): Promise<{ sections: string[]; orderWindow?: OrderWindow }> {
  if (plan.routeCostOnly) {
    log("what each route costs the server");
    const costs = await routeCosts(db, servers.floor, plan);
    return { sections: [ROUTE_COST_HEADING, routeCostMarkdown(costs)] };
  }
  const pace = await warm(servers.target, plan);
  const { section, cost } = await orderCosts(db, plan, servers, pace);
  log("what each route costs the server");
  const costs = await routeCosts(db, servers.floor, plan);
  const sections = [...section, ROUTE_COST_HEADING, routeCostMarkdown(costs)];
  if (!plan.orderCostOnly)
    sections.push(...(await checkoutSections(db, plan, servers, pace, costs)));
  return { sections, orderWindow: { window: cost.window, orders: cost.orders } };
}

/**
 * What needs the servers stopped first: the order profile (written when its instance exits), the
 * profile under load (servers of its own) and the bytes per key (no load on the database).
 */
async function afterServers(
  db: Database,
  plan: Plan,
  replayKey: string,
  orderProfile: { dir: string | null; orderWindow?: OrderWindow },
): Promise<string[]> {
  const sections: string[] = [];
  if (orderProfile.dir && orderProfile.orderWindow)
    sections.push(
      "### Where the app server's CPU goes over its paid orders (checkouts and their webhooks)",
      orderProfileMarkdown(
        orderProfile.dir,
        orderProfile.orderWindow.window,
        orderProfile.orderWindow.orders,
      ),
    );
  if (plan.profile && !plan.orderCostOnly && !plan.routeCostOnly)
    sections.push(
      "### Where the server's CPU goes (protected new keys)",
      await profileUnderLoad(db, plan, replayKey, log),
    );
  if (!plan.orderCostOnly && !plan.routeCostOnly)
    sections.push("### Bytes per stored key", storageMarkdown(await measureStorage(db.pool)));
  return sections;
}

/** The report on stdout and in plan.output (lab/bench/results/http-latest.md by default). */
function writeReport(plan: Plan, sections: string[]): void {
  const markdown = [header(plan), ...sections].join("\n\n") + "\n";
  const out = path.resolve(ROOT, plan.output);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, markdown);
  console.log(`\n${markdown}`);
  log(`written to ${path.relative(ROOT, out)}`);
}

async function main(): Promise<void> {
  const plan = parsePlan(process.argv.slice(2));
  await ensureBuild(log);
  // The provider posts its events to the first instance, as it would to the shop in production.
  const db = await startDatabase({ webhookPort: plan.basePort });
  const sections: string[] = [];
  try {
    // With --order-cost, the profile is of the first instance over its paid orders.
    const orderProfileDir =
      plan.orderCostOnly && plan.profile ? mkdtempSync(path.join(os.tmpdir(), "once-prof-")) : null;
    const servers = await startServers(db, plan, orderProfileDir);
    let orderWindow: OrderWindow | undefined;
    try {
      const measured = await measureOnServers(db, plan, servers);
      sections.push(...measured.sections);
      orderWindow = measured.orderWindow;
    } finally {
      await stopServers(servers);
    }
    const orderProfile = { dir: orderProfileDir, ...(orderWindow ? { orderWindow } : {}) };
    sections.push(...(await afterServers(db, plan, servers.target.replayKey, orderProfile)));
  } finally {
    await db.stop();
  }
  writeReport(plan, sections);
}

await runBench("bench:http", async (named) => {
  step = named;
  await main();
});
