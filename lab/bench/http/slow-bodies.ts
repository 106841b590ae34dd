// `npm run bench:overload -- --slow-bodies`: slow bodies count for nothing, measured. One instance
// as `npm start` runs it; a measuring client (autocannon, 8 connections) sends catalog reads and
// new-key checkouts in slices of `--slice-seconds` (10). For each attack (40, 400 and 4 000
// connections, anonymous and with a valid token) the attacker holds that many slow-body connections
// open for `--seconds` (60; lab/bench/http/slow-attack.ts, in a process of its own so that its
// sockets do not share the measuring client's event loop), while the client's slices alternate
// between the two paths; before each attack and after it, one slice of each path without it: the
// calm rate of the same run (from both sides, so that the server's drift over a run is not counted
// as the attack's). Every slice, calm or attacked, starts once every order written so far is paid
// (its charge made and its webhook answered, up to 30 s): a checkout slice's orders are charged
// after it, and a slice that shared the cores with that would be measured against one that did
// not. Printed: each path's 200s a second under attack as a ratio to its calm rate (goal >= 0.9x),
// health during the attack, the slow sockets the server answered (408 at the body deadline) and
// the attacker opened again, and any answer but 200 the client got.
// Beside the app, in the same run and on the same database, the floor: the same routes written by
// hand on bare node:http + pg (floor-server.ts), with the app's doors against slow clients (the
// same header and request timeouts, body deadline and 408). After the app's two cells at each
// count, one cell of the same attack on the floor, anonymous only: the floor reads the body before
// it looks at the token, so a token changes nothing there. Its orders are charged by the app's
// payment worker (the outbox is the database's), so its slices wait for payments as the app's do.
// The floor's ratio is what the same attack costs a server that does nothing but the work, on the
// same cores at the same moment; the line under the table divides the app's worst ratio at each
// count by the floor's. Flags after `--slow-bodies`: --connections
// (40,400,4000), --seconds, --slice-seconds, --port (3300; the floor on the port two above it). 4 000 sockets
// need as many open files in this process and in each server: raise `ulimit -Hn` if the bench
// says so.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import autocannon, { type AutocannonRequest } from "autocannon";
import { runBench, type Step } from "../fail";
import type pg from "pg";
import { startFloorServer, withOneInstance } from "./cluster";
import { paymentsSettled, settle } from "./pace";
import { checkoutHeaders, orderBody, PROTECTED_PATH, TOKEN } from "./scenarios";
import { fork } from "node:child_process";
import path from "node:path";
import { cpuMsOf } from "./cpu";
import { numberFlag, numberListFlag } from "../flags";

const COUNTS = numberListFlag("connections", [40, 400, 4000]);
const HOLD_SECONDS = numberFlag("seconds", 60);
const SLICE_SECONDS = numberFlag("slice-seconds", 10);
const CLIENT_CONNECTIONS = 8;
const PATHS = ["catalog.list", "new keys"] as const;
type Path = (typeof PATHS)[number];
const GOAL = 0.9;

interface Tally {
  served: number;
  wallMs: number;
  other: Record<number, number>;
}
interface Cell {
  count: number;
  server: Server;
  who: "anonymous" | "with a token";
  calm: Record<Path, Tally>;
  attacked: Record<Path, Tally>;
  health: string[];
  reopened: number;
  answers: Record<string, number>;
  /** The attacker process's CPU over the attack, in share of one core. */
  attackerCores: number;
}

interface AttackProcess {
  pid: number;
  /** Stops the attack; what the server answered its sockets, and how many it opened again. */
  stop(): Promise<{ reopened: number; answers: Record<string, number> }>;
}

/** The attacker in a process of its own (slow-attacker.ts), once its sockets are all open. */
async function startAttackProcess(
  port: number,
  count: number,
  token: string | undefined,
): Promise<AttackProcess> {
  const child = fork(
    path.join(import.meta.dirname, "slow-attacker.ts"),
    [String(port), String(count), token ?? ""],
    { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`the attacker exited (${code}) unasked`))),
  );
  const message = <T>() =>
    new Promise<T>((resolve) => child.once("message", (m) => resolve(m as T)));
  await Promise.race([message<{ ready: true }>(), exited]);
  return {
    pid: child.pid!,
    stop: async () => {
      const told = message<{ reopened: number; answers: Record<string, number> }>();
      child.send("stop");
      const said = await Promise.race([told, exited]);
      exited.catch(() => {}); // it exits after saying
      return said;
    },
  };
}

const APP = "the app (as npm start)";
const FLOOR = "the floor (node:http + pg)";
type Server = typeof APP | typeof FLOOR;

/** The server under attack, its product, and the bench's own pool on its database. */
interface Target {
  server: Server;
  port: number;
  pid: number;
  productId: string;
  pool: pg.Pool;
}

/** Slices that started with orders still unpaid once paymentsSettled gave up (30 s). */
let startedUnpaid = 0;

const emptyTally = (): Tally => ({ served: 0, wallMs: 0, other: {} });
const rate = (t: Tally) => (t.served / t.wallMs) * 1000;

function requestOf(path: Path, productId: string): AutocannonRequest {
  if (path === "catalog.list") return { method: "GET", path: "/api/trpc/catalog.list" };
  return {
    method: "POST",
    path: PROTECTED_PATH,
    body: orderBody(productId),
    setupRequest: (r) => ({ ...r, headers: checkoutHeaders(randomUUID()) }),
  };
}

/** One slice of the measuring client's closed loop, added to `into`, once payments are settled. */
async function slice(target: Target, path: Path, into: Tally): Promise<void> {
  const { port, productId } = target;
  if (!(await paymentsSettled(target.pool))) startedUnpaid++;
  const started = performance.now();
  const run = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CLIENT_CONNECTIONS,
    duration: SLICE_SECONDS,
    timeout: 10,
    requests: [requestOf(path, productId)],
  });
  run.on("response", (_client: unknown, status: number) => {
    if (status === 200) into.served++;
    else into.other[status] = (into.other[status] ?? 0) + 1;
  });
  const result = await run;
  into.wallMs += performance.now() - started;
  if (result.errors + result.timeouts)
    into.other[0] = (into.other[0] ?? 0) + result.errors + result.timeouts;
}

async function health(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/health`);
  const body = (await res.json().catch(() => ({}))) as { status?: string };
  return `${res.status} ${body.status ?? "?"}`;
}

/**
 * A calm slice of each path, the attack held for HOLD_SECONDS while the client's slices alternate,
 * and a calm slice of each path again.
 */
async function measureCell(
  target: Target,
  count: number,
  token: string | undefined,
): Promise<Cell> {
  const cell: Cell = {
    count,
    server: target.server,
    who: token ? "with a token" : "anonymous",
    calm: { "catalog.list": emptyTally(), "new keys": emptyTally() },
    attacked: { "catalog.list": emptyTally(), "new keys": emptyTally() },
    health: [],
    reopened: 0,
    answers: {},
    attackerCores: 0,
  };
  for (const path of PATHS) await slice(target, path, cell.calm[path]);
  const attack = await startAttackProcess(target.port, count, token);
  const cpuBefore = cpuMsOf([attack.pid]);
  const started = performance.now();
  try {
    const until = started + HOLD_SECONDS * 1000;
    for (let i = 0; performance.now() < until; i++) {
      const path = PATHS[i % PATHS.length]!;
      await slice(target, path, cell.attacked[path]);
      cell.health.push(await health(target.port));
    }
    cell.attackerCores = (cpuMsOf([attack.pid]) - cpuBefore) / (performance.now() - started);
  } finally {
    Object.assign(cell, await attack.stop());
  }
  // The calm rate from both sides of the attack: the server's rate drifts over a run (catalog
  // reads went from 2 347 to 1 734 a second over a minute of reads and checkouts, no attack), and
  // a calm slice taken only before would charge that drift to the attack.
  for (const path of PATHS) await slice(target, path, cell.calm[path]);
  return cell;
}

const ratioText = (calm: Tally, attacked: Tally) =>
  `${rate(calm).toFixed(1)} → ${rate(attacked).toFixed(1)} (${(rate(attacked) / rate(calm)).toFixed(2)}×)`;
const counted = (r: Record<string | number, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${k === "0" ? "socket errors" : k}×${n}`)
    .join(", ") || "–";

/** A cell's lowest ratio of attacked to calm, and the path it was on. */
function worstOf(c: Cell): { ratio: number; path: Path } {
  const [path] = [...PATHS].sort(
    (a, b) => rate(c.attacked[a]) / rate(c.calm[a]) - rate(c.attacked[b]) / rate(c.calm[b]),
  );
  return { ratio: rate(c.attacked[path!]) / rate(c.calm[path!]), path: path! };
}

function print(cells: Cell[]): void {
  console.log(
    `\nonce bench:overload --slow-bodies — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores (load average ${os.loadavg()[0]!.toFixed(1)}), the attack held ${HOLD_SECONDS} s, the client's slices ${SLICE_SECONDS} s at ${CLIENT_CONNECTIONS} connections\n`,
  );
  console.log(
    "| slow-body connections | server | attacker | catalog.list 200/s: calm → attacked | new-key checkouts 200/s: calm → attacked | health during the attack | slow sockets answered (opened again) | the attacker's CPU (cores) | the client's other answers | goal ≥ 0.9× |",
  );
  console.log("|---:|---|---|---:|---:|---|---|---:|---|---|");
  for (const c of cells) {
    const worst = worstOf(c).ratio;
    const other = { ...c.attacked["catalog.list"].other };
    for (const [k, n] of Object.entries(c.attacked["new keys"].other))
      other[Number(k)] = (other[Number(k)] ?? 0) + n;
    // The goal is the app's; the floor's row gives its worst ratio without a verdict.
    const verdict =
      c.server === APP
        ? `**${worst >= GOAL ? "met" : "missed"}** (${worst.toFixed(2)}×)`
        : `– (${worst.toFixed(2)}×)`;
    console.log(
      `| ${c.count} | ${c.server} | ${c.who} | ${ratioText(c.calm["catalog.list"], c.attacked["catalog.list"])} | ${ratioText(c.calm["new keys"], c.attacked["new keys"])} | ${[...new Set(c.health)].join(", ")} | ${counted(c.answers)} (${c.reopened}) | ${c.attackerCores.toFixed(2)} | ${counted(other)} | ${verdict} |`,
    );
  }
  console.log("");
  for (const count of COUNTS) {
    const worstCell = (server: Server) =>
      cells
        .filter((c) => c.count === count && c.server === server)
        .map((c) => ({ ...worstOf(c), who: c.who }))
        .sort((a, b) => a.ratio - b.ratio)[0];
    const app = worstCell(APP);
    const floor = worstCell(FLOOR);
    if (!app || !floor) continue;
    console.log(
      `- ${count} slow-body connections: the app's worst ratio ÷ the floor's worst ratio = ${app.ratio.toFixed(2)}× (${app.who}, ${app.path}) ÷ ${floor.ratio.toFixed(2)}× (${floor.path}) = ${(app.ratio / floor.ratio).toFixed(2)}`,
    );
  }
  if (startedUnpaid)
    console.log(
      `\n${startedUnpaid} slices started with orders still unpaid after 30 s of waiting for their payments.`,
    );
}

/** The soft limit on open files of a process, from /proc. */
function openFiles(pid: number | "self"): number {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === "unlimited" ? Infinity : Number(soft);
}

/**
 * At each count: the app's two cells (anonymous, with a token), then the floor's (anonymous: the
 * floor reads the whole body before it looks at the token, so a token would change nothing there).
 */
async function attackAll(app: Target, floor: Target, step: Step): Promise<Cell[]> {
  const needed = Math.max(...COUNTS) + 1024;
  for (const [who, pid] of [
    ["this process", "self"],
    ["the app", app.pid],
    ["the floor", floor.pid],
  ] as const)
    if (openFiles(pid) < needed)
      throw new Error(
        `${who} may open too few files for ${Math.max(...COUNTS)} sockets: raise the hard limit (ulimit -Hn ${needed})`,
      );
  const cells: Cell[] = [];
  for (const count of COUNTS)
    for (const [target, token] of [
      [app, undefined],
      [app, TOKEN],
      [floor, undefined],
    ] as const) {
      // The app's payment worker charges the floor's orders too: both are settled before a cell.
      await settle([app.pid, floor.pid]);
      step(
        `${target.server}: ${count} slow-body connections (${token ? "with a token" : "anonymous"}), ${HOLD_SECONDS} s`,
      );
      cells.push(await measureCell(target, count, token));
    }
  return cells;
}

await runBench("bench:overload --slow-bodies", (step) => {
  const port = numberFlag("port", 3300);
  return withOneInstance(step, port, async (instance, db) => {
    const floorServer = await startFloorServer(db.url, port + 2);
    try {
      const on = (server: Server, { port, pid }: { port: number; pid: number }): Target => ({
        server,
        port,
        pid,
        productId: db.productId,
        pool: db.pool,
      });
      const app = on(APP, instance);
      const floor = on(FLOOR, floorServer);
      for (const target of [app, floor]) {
        step(`${target.server}: warming up both paths`);
        for (const path of PATHS) await slice(target, path, emptyTally());
      }
      print(await attackAll(app, floor, step));
    } finally {
      await floorServer.stop();
    }
  });
});
