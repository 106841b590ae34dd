// `npm run bench:overload -- --crowd`: a crowd. One instance as `npm start` runs it (the front door,
// the admission queue) and, beside it in the same run on the same database, one with its ceiling
// lifted (HTTP_MAX_IN_FLIGHT=100000: the queue and its deadline stay, the bound on requests in
// flight goes), at 16, 64, 256 and 1 024 connections, for catalog.list, new-key checkouts and
// replays, with two kinds of closed-loop client:
//   - `ignore`: autocannon, sending again as soon as answered, whatever the answer (as most
//     scripts, bots and retrying proxies do);
//   - `honour`: a refused client waits its Retry-After and up to half of it again at random
//     before sending again (as the shop's own client link does).
// Beside them, the floor: the same routes written by hand on bare node:http + pg, under the same
// ignoring crowd (every path), for what the machine itself gives at each count. Each path is warmed
// up on every instance first, and each cell starts once the orders of the cells before it are paid
// and every process is idle. Cells alternate between the instances, `--seconds` each (4 unless
// told). Printed: answers 200 a second per cell, each as a ratio to the best count's for that path,
// client and instance; refusals; the goal per path (every count >= 0.9x the best) with the floor's
// own shape beside it; a refusal's server CPU against a served catalog read's (from the ignoring
// clients' 1 024-connection catalog cell: its CPU less its reads at the 16-connection cell's cost,
// over its refusals); where the cores went in each ignoring cell (the server's CPU per answer, and
// the cores the server, the load generator and PostgreSQL used); and the recovery cell: new-key
// checkouts at 64 connections, then `--flood-seconds` (30) at 1 024, then 64 again: how long
// until a one-second window serves >= 0.9x the rate before, beside the CPU the payment worker and
// the provider spend meanwhile charging the flood's orders.
// Flags after `--crowd`: --seconds, --connections (16,64,256,1024), --routes (catalog.list,
// new keys,replays), --client-kinds (ignore,honour), --flood-seconds, --no-recovery, --port (3300), and --server-cores
// (e.g. 0: the servers measured on that core alone, the load generator,
// PostgreSQL and the payment side on the others, as clients and server are apart in production).
import { randomUUID } from "node:crypto";
import http from "node:http";
import os from "node:os";
import autocannon from "autocannon";
import {
  ensureBuild,
  startDatabase,
  startFloorServer,
  startInstance,
  startWorkerProcess,
  type Database,
  type Instance,
} from "./cluster";
import { cpuMsOf } from "./cpu";
import { coreSplit, moveThisProcessTo } from "./cores";
import { choiceFlag, numberFlag, numberListFlag, stringFlag } from "../flags";
import { checkoutHeaders, completeKey, orderBody } from "./scenarios";
import { runBench, type Step } from "../fail";
import { paymentsSettled, settle } from "./pace";
import type pg from "pg";

const COUNTS = numberListFlag("connections", [16, 64, 256, 1024]);
const SECONDS = numberFlag("seconds", 4);
const ALL_PATHS = ["catalog.list", "new keys", "replays"] as const;
type Path = (typeof ALL_PATHS)[number];
const PATHS: Path[] = choiceFlag("routes", ALL_PATHS);
const CLIENT_KINDS = ["ignore", "honour"] as const;
type ClientKind = (typeof CLIENT_KINDS)[number];
const CLIENTS: ClientKind[] = choiceFlag("client-kinds", CLIENT_KINDS);
const FLOOD_SECONDS = numberFlag("flood-seconds", 30);
/** Recovery: the connections measured before and after the flood, and the flood's. */
const CALM = 64;
const FLOOD = 1024;
/** How soon after the flood the calm clients must be served at 0.9x their rate before it. */
const RECOVERY_TARGET_S = 2;
const RECOVERY_WATCH_S = 8;
const WARM_SECONDS = 2;
/** --server-cores: the servers measured on these cores alone, everything else on the rest. */
const SPLIT = coreSplit(stringFlag("server-cores"), "--server-cores");

interface Cell {
  served: number;
  refused: number;
  other: number;
  wallMs: number;
  /** The server's CPU over the cell. */
  cpuMs: number;
  /** The load generator's (this process: autocannon, or the honouring clients). */
  generatorCpuMs: number;
  /** PostgreSQL's (the postmaster and its backends). */
  databaseCpuMs: number;
}

type CrowdRequest =
  | { method: "GET"; path: string }
  | { method: "POST"; path: string; body: string; headers: () => Record<string, string> };

/** What one request of `path` is, for autocannon and for the honouring clients alike. */
function requestOf(path: Path, productId: string, replayKey: string): CrowdRequest {
  if (path === "catalog.list") return { method: "GET", path: "/api/trpc/catalog.list" };
  return {
    method: "POST",
    path: "/api/trpc/checkout.placeOrder",
    body: orderBody(productId),
    headers: () => checkoutHeaders(path === "replays" ? replayKey : randomUUID()),
  };
}

/** `connections` closed-loop clients of `path` for `seconds`, counting answers by status. */
interface Crowd {
  port: number;
  path: Path;
  connections: number;
  seconds: number;
  productId: string;
  replayKey: string;
  statuses: Record<number, number>;
}

/** Closed-loop autocannon clients that ignore Retry-After; `onServed` hears each 200. */
async function ignoring(
  { port, path, connections, seconds, productId, replayKey, statuses }: Crowd,
  onServed?: () => void,
): Promise<void> {
  const request = requestOf(path, productId, replayKey);
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [
      request.method === "POST"
        ? {
            method: request.method,
            path: request.path,
            body: request.body,
            setupRequest: (r) => ({ ...r, headers: request.headers() }),
          }
        : request,
    ],
  });
  instance.on("response", (_client: unknown, status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 200) onServed?.();
  });
  await instance;
}

/** Closed-loop clients that, refused, wait Retry-After and up to half of it again at random. */
async function honouring({
  port,
  path,
  connections,
  seconds,
  productId,
  replayKey,
  statuses,
}: Crowd): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const request = requestOf(path, productId, replayKey);
  const until = performance.now() + seconds * 1000;
  const send = () =>
    new Promise<{ status: number; retryAfter?: string }>((resolve) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path: request.path,
          method: request.method,
          agent,
          headers: request.method === "POST" ? request.headers() : {},
          timeout: 10_000,
        },
        (res) => {
          res.resume();
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: res.headers["retry-after"] as string | undefined,
            }),
          );
        },
      );
      req.on("error", () => resolve({ status: 0 }));
      req.end(request.method === "POST" ? request.body : undefined);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const { status, retryAfter } = await send();
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 503) {
          const ms = Number(retryAfter ?? 1) * 1000 * (1 + Math.random() / 2);
          await new Promise((r) => setTimeout(r, Math.min(ms, until - performance.now())));
        }
      }
    }),
  );
  agent.destroy();
}

async function cell(
  port: number,
  pid: number,
  databasePid: number,
  kind: ClientKind,
  path: Path,
  connections: number,
  productId: string,
  replayKey: string,
): Promise<Cell> {
  const statuses: Record<number, number> = {};
  const cpuBefore = cpuMsOf([pid]);
  const databaseBefore = cpuMsOf([databasePid]);
  const generatorBefore = process.cpuUsage();
  const started = performance.now();
  const crowd = { port, path, connections, seconds: SECONDS, productId, replayKey, statuses };
  await (kind === "ignore" ? ignoring(crowd) : honouring(crowd));
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsOf([pid]) - cpuBefore;
  const databaseCpuMs = cpuMsOf([databasePid]) - databaseBefore;
  const generator = process.cpuUsage(generatorBefore);
  const generatorCpuMs = (generator.user + generator.system) / 1000;
  const served = statuses[200] ?? 0;
  const refused = statuses[503] ?? 0;
  const all = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    served,
    refused,
    other: all - served - refused,
    wallMs,
    cpuMs,
    generatorCpuMs,
    databaseCpuMs,
  };
}

interface Recovery {
  before: number;
  /** Seconds from the flood's end to the end of the first 1 s window at >= 0.9x `before`. */
  recoveredAfterS?: number;
  floodServed: number;
  floodRefused: number;
  /**
   * CPU (cores) of the payment worker and the provider over the first RECOVERY_TARGET_S after the
   * flood: charging the flood's orders on the same two cores as the instance.
   */
  paymentsCores: number;
}

/** 64 ignoring clients, 1 024 for FLOOD_SECONDS, 64 again: when are the 64 served as before? */
async function recovery(
  port: number,
  productId: string,
  paymentPids: readonly number[],
): Promise<Recovery> {
  const calm: Record<number, number> = {};
  const beforeStarted = performance.now();
  const newKeys = { port, path: "new keys" as const, productId, replayKey: "" };
  await ignoring({ ...newKeys, connections: CALM, seconds: SECONDS, statuses: calm });
  const before = ((calm[200] ?? 0) / (performance.now() - beforeStarted)) * 1000;
  const flood: Record<number, number> = {};
  await ignoring({ ...newKeys, connections: FLOOD, seconds: FLOOD_SECONDS, statuses: flood });
  const floodEnd = performance.now();
  const paymentsCpuAtEnd = cpuMsOf(paymentPids);
  let paymentsCores = 0;
  const paymentsCpu = setTimeout(() => {
    paymentsCores = (cpuMsOf(paymentPids) - paymentsCpuAtEnd) / (RECOVERY_TARGET_S * 1000);
  }, RECOVERY_TARGET_S * 1000);
  const servedAt: number[] = [];
  await ignoring({ ...newKeys, connections: CALM, seconds: RECOVERY_WATCH_S, statuses: {} }, () =>
    servedAt.push((performance.now() - floodEnd) / 1000),
  );
  clearTimeout(paymentsCpu);
  let recoveredAfterS: number | undefined;
  for (let start = 0; start + 1 <= RECOVERY_WATCH_S; start += 0.1) {
    const inWindow = servedAt.filter((t) => t >= start && t < start + 1).length;
    if (inWindow >= 0.9 * before) {
      recoveredAfterS = start + 1;
      break;
    }
  }
  return {
    before,
    recoveredAfterS,
    floodServed: flood[200] ?? 0,
    floodRefused: flood[503] ?? 0,
    paymentsCores,
  };
}

/**
 * An instance under test and the name its table and rows go by. `floor`: the same routes written
 * by hand on bare node:http + pg (floor-server.ts), run under the same crowd for the machine's own
 * shape: what node:http and the kernel give at each count when nothing but the work is done.
 */
type Named = {
  name: string;
  instance: Pick<Instance, "port" | "pid" | "stop">;
  floor?: boolean;
};

const FLOOR_NAME = "the floor: the same routes by hand (node:http + pg)";
/**
 * The floor answers every path to ignoring clients, the crowd that matters (it refuses nothing, so
 * a client that honours Retry-After would send as one that ignores it). Its replays are the app's
 * completed key, answered from the store (the floor keeps no answer in memory).
 */
const measuredOn = (named: Named, kind: ClientKind) => !named.floor || kind === "ignore";

/**
 * The instance as `npm start` runs it and the one with its ceiling lifted, pushed one at a time
 * into `into` so that the bench's finally stops whichever did start.
 */
async function startBoth(db: Database, base: number, into: Named[]): Promise<void> {
  into.push({
    name: "bounded (as npm start)",
    instance: await startInstance({
      port: base,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
      paymentJobs: false,
      cores: SPLIT?.server,
    }),
  });
  into.push({
    name: "ceiling lifted (HTTP_MAX_IN_FLIGHT=100000)",
    instance: await startInstance({
      port: base + 1,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
      paymentJobs: false,
      env: { HTTP_MAX_IN_FLIGHT: "100000" },
      cores: SPLIT?.server,
    }),
  });
  into.push({
    name: FLOOR_NAME,
    instance: await startFloorServer(db.url, base + 2, SPLIT?.server),
    floor: true,
  });
}

/** What the cells share: the product, the completed key for the replays, every pid to settle. */
interface Run {
  productId: string;
  replayKey: string;
  pids: number[];
  /** The payment worker and the provider: they charge the orders the checkouts write. */
  paymentPids: number[];
  /** The bench's pool on the database: whether the orders written so far are all paid. */
  pool: pg.Pool;
  /** PostgreSQL's postmaster: its CPU and its backends' is the database's share of a cell. */
  databasePid: number;
  step: Step;
}

const cellKey = (name: string, kind: ClientKind, path: Path, connections: number) =>
  `${name}|${kind}|${path}|${connections}`;

/**
 * Every client kind, path and count, alternating between the instances, each from a quiet machine:
 * the orders of the cells before it paid, and every process idle.
 */
async function measureCells(instances: Named[], run: Run): Promise<Map<string, Cell>> {
  const cells = new Map<string, Cell>();
  for (const kind of CLIENTS)
    for (const path of PATHS) {
      if (kind === CLIENTS[0]) await warmUp(instances, path, run);
      for (const connections of COUNTS)
        for (const named of instances) {
          if (!measuredOn(named, kind)) continue;
          const { name, instance } = named;
          await paymentsSettled(run.pool);
          await settle(run.pids);
          run.step(`${name}: ${kind}, ${path}, ${connections} connections, ${SECONDS} s`);
          cells.set(
            cellKey(name, kind, path, connections),
            await cell(
              instance.port,
              instance.pid,
              run.databasePid,
              kind,
              path,
              connections,
              run.productId,
              run.replayKey,
            ),
          );
        }
    }
  return cells;
}

/**
 * Each instance's first seconds on a path, not measured: without them the first count measured
 * (16) ran on a cold instance (JIT, pool connections) and read as the crowd's doing.
 */
async function warmUp(instances: Named[], path: Path, run: Run): Promise<void> {
  for (const named of instances) {
    run.step(`${named.name}: warming up ${path}`);
    await ignoring({
      port: named.instance.port,
      path,
      connections: CALM,
      seconds: WARM_SECONDS,
      productId: run.productId,
      replayKey: run.replayKey,
      statuses: {},
    });
  }
  await settle(run.pids);
}

/** The recovery cell on each instance, unless --no-recovery. */
async function measureRecoveries(instances: Named[], run: Run): Promise<Map<string, Recovery>> {
  const recoveries = new Map<string, Recovery>();
  if (!process.argv.includes("--no-recovery"))
    for (const { name, instance, floor } of instances) {
      if (floor) continue;
      await paymentsSettled(run.pool); // the flood before it wrote thousands of orders
      await settle(run.pids);
      run.step(`${name}: recovery, ${CALM} → ${FLOOD} for ${FLOOD_SECONDS} s → ${CALM}`);
      recoveries.set(name, await recovery(instance.port, run.productId, run.paymentPids));
    }
  return recoveries;
}

/** One table per instance: each cell's 200s a second, its ratio to the row's best, its 503s. */
function printCells(instances: Named[], cells: Map<string, Cell>): void {
  for (const { name } of instances) {
    console.log(`\n### ${name}\n`);
    console.log(
      `| clients | path | ${COUNTS.map((c) => `${c} conns: 200/s (× best), 503s`).join(" | ")} |`,
    );
    console.log(`|---|---|${COUNTS.map(() => "---:").join("|")}|`);
    for (const kind of CLIENTS)
      for (const path of PATHS) {
        if (!cells.has(cellKey(name, kind, path, COUNTS[0]!))) continue;
        const row = COUNTS.map((c) => cells.get(cellKey(name, kind, path, c))!);
        const rates = row.map((c) => (c.served / c.wallMs) * 1000);
        const best = Math.max(...rates);
        console.log(
          `| ${kind} | ${path} | ${row.map((c, i) => `${rates[i]!.toFixed(1)} (${(rates[i]! / best).toFixed(2)}), ${c.refused}${c.other ? ` +${c.other} other` : ""}`).join(" | ")} |`,
        );
      }
  }
}

/**
 * Where the cores went in each ignoring cell: the server's CPU per answer and in cores, beside the
 * load generator's and PostgreSQL's, which share the machine with it. A server whose CPU per
 * answer holds while its cores fall is waiting on its clients or its database, not working more.
 */
function printCores(instances: Named[], cells: Map<string, Cell>): void {
  console.log(
    `\n### Where the cores went (ignoring clients): server ms of CPU per answer; cores used by the server / the load generator / PostgreSQL\n`,
  );
  console.log(`| instance | path | ${COUNTS.map((c) => `${c} conns`).join(" | ")} |`);
  console.log(`|---|---|${COUNTS.map(() => "---:").join("|")}|`);
  const cores = (ms: number, cell: Cell) => (ms / cell.wallMs).toFixed(2);
  for (const { name } of instances)
    for (const path of PATHS) {
      const row = COUNTS.map((c) => cells.get(cellKey(name, "ignore", path, c)));
      if (row.some((c) => !c)) continue;
      console.log(
        `| ${name} | ${path} | ${(row as Cell[]).map((c) => `${(c.cpuMs / Math.max(1, c.served + c.refused)).toFixed(3)} ms; ${cores(c.cpuMs, c)} / ${cores(c.generatorCpuMs, c)} / ${cores(c.databaseCpuMs, c)}`).join(" | ")} |`,
      );
    }
}

/** A row's lowest count's rate over its best count's, and the count it was at. */
function lowestOfBest(cells: Map<string, Cell>, name: string, kind: ClientKind, path: Path) {
  if (!cells.has(cellKey(name, kind, path, COUNTS[0]!))) return undefined;
  const rates = COUNTS.map((c) => {
    const cell = cells.get(cellKey(name, kind, path, c))!;
    return (cell.served / cell.wallMs) * 1000;
  });
  const best = Math.max(...rates);
  const low = Math.min(...rates);
  return { ratio: best > 0 ? low / best : 0, at: COUNTS[rates.indexOf(low)]! };
}

/**
 * The goal, per path and client: served a second at every count >= 0.9x the best count's, on the
 * instance as `npm start` runs it; beside it the floor's own lowest-to-best under the same crowd,
 * which no server on this machine can beat.
 */
function printGoodput(instances: Named[], cells: Map<string, Cell>): void {
  const bounded = instances[0]!.name;
  console.log(
    `\n### Goodput as the crowd grows: the lowest count's 200/s ÷ the best count's (goal ≥ 0.9×)\n`,
  );
  console.log(`| clients | path | ${bounded} | ${FLOOR_NAME} | |`);
  console.log(`|---|---|---:|---:|---|`);
  for (const kind of CLIENTS)
    for (const path of PATHS) {
      const app = lowestOfBest(cells, bounded, kind, path)!;
      const floor = lowestOfBest(cells, FLOOR_NAME, kind, path);
      const floorText = floor ? `${floor.ratio.toFixed(2)}× (at ${floor.at})` : "–";
      console.log(
        `| ${kind} | ${path} | ${app.ratio.toFixed(2)}× (at ${app.at}) | ${floorText} | **${app.ratio >= 0.9 ? "met" : "missed"}** |`,
      );
    }
}

function printRecoveries(recoveries: Map<string, Recovery>): void {
  if (!recoveries.size) return;
  console.log(
    `\n### Recovery: new-key checkouts, ${CALM} ignoring clients, ${FLOOD} for ${FLOOD_SECONDS} s, ${CALM} again (target: >= 0.9x within ${RECOVERY_TARGET_S} s)\n`,
  );
  console.log(
    `| instance | before: 200/s | during the flood: 200, 503 | back at 0.9x after | payment worker + provider in the first ${RECOVERY_TARGET_S} s after (cores) | |`,
  );
  console.log(`|---|---:|---:|---:|---:|---|`);
  for (const [name, r] of recoveries)
    console.log(
      `| ${name} | ${r.before.toFixed(1)} | ${r.floodServed}, ${r.floodRefused} | ${r.recoveredAfterS === undefined ? `not within ${RECOVERY_WATCH_S} s` : `${r.recoveredAfterS.toFixed(1)} s`} | ${r.paymentsCores.toFixed(2)} | **${r.recoveredAfterS !== undefined && r.recoveredAfterS <= RECOVERY_TARGET_S ? "met" : "missed"}** |`,
    );
  console.log(
    `\nThe payment worker charges the orders the flood wrote, ${SPLIT ? "on the cores the server does not use" : "on the same cores as the server"}, while the calm clients are measured.`,
  );
}

/**
 * A refusal's server CPU against a served catalog read's, on the bounded instance: the highest
 * count's CPU less its reads at the lowest count's cost per read, over its refusals.
 */
function printRefusalCost(bounded: Named, cells: Map<string, Cell>): void {
  const low = cells.get(cellKey(bounded.name, "ignore", "catalog.list", COUNTS[0]!));
  const high = cells.get(cellKey(bounded.name, "ignore", "catalog.list", COUNTS.at(-1)!));
  if (!low || !high) return;
  const readCpu = low.cpuMs / Math.max(1, low.served);
  if (high.refused > 0) {
    const refusalCpu = Math.max(0, high.cpuMs - high.served * readCpu) / high.refused;
    console.log(
      `\nA served catalog read: ${readCpu.toFixed(2)} ms of server CPU (${COUNTS[0]} connections); a refusal: ${refusalCpu.toFixed(3)} ms (${COUNTS.at(-1)} connections: CPU less its reads at that cost, over ${high.refused} refusals) = ${(refusalCpu / readCpu).toFixed(3)}× a read`,
    );
  } else console.log(`\nNo refusal at ${COUNTS.at(-1)} connections: a refusal's CPU not measured`);
}

await runBench("bench:overload --crowd", async (step) => {
  await ensureBuild(step);
  // Before anything is started, so that PostgreSQL, the worker and the provider inherit it.
  if (SPLIT) moveThisProcessTo(SPLIT.rest);
  const db = await startDatabase();
  const base = numberFlag("port", 3300);
  const worker = startWorkerProcess(db.url, db.providerUrl);
  const instances: Named[] = [];
  try {
    await startBoth(db, base, instances);
    const replayKey = `crowd-replay-${randomUUID()}`;
    await completeKey(`http://127.0.0.1:${base}`, db.productId, replayKey);
    const pids = [...instances.map((i) => i.instance.pid), worker.pid];
    const paymentPids = [worker.pid, db.providerPid];
    const run: Run = {
      productId: db.productId,
      replayKey,
      pids,
      paymentPids,
      pool: db.pool,
      databasePid: db.pid,
      step,
    };
    const cells = await measureCells(instances, run);
    const recoveries = await measureRecoveries(instances, run);
    console.log(
      `\nonce bench:overload --crowd — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores (load average ${os.loadavg()[0]!.toFixed(1)}), ${SECONDS} s a cell, cells alternating between the two instances${SPLIT ? `, the servers on cores ${SPLIT.server} alone, everything else on ${SPLIT.rest}` : ""}`,
    );
    printCells(instances, cells);
    printGoodput(instances, cells);
    printCores(instances, cells);
    printRecoveries(recoveries);
    printRefusalCost(instances[0]!, cells);
  } finally {
    for (const { instance } of instances) await instance.stop();
    await worker.stop();
    await db.stop();
  }
});
