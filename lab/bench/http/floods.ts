// `npm run bench:overload -- --floods`: anonymous floods of the routes that are not the API, each
// beside a probe of the API, measured. One instance as `npm start` runs it (the production build
// behind its front door); the probe (autocannon, PROBE_CONNECTIONS connections on each path) sends
// catalog reads and new-key checkouts at the same time for a slice of `--slice` seconds (5). For
// each flood (`GET /api/health`, `GET /signin`, `GET /` and unsigned `POST /api/webhooks/payments`
// at 64 and 256 connections, each sending as fast as it is answered; and 4 000 idle keep-alive
// connections, each after one `GET /api/health`, opened again whenever the server closes one,
// their flooded slice longer by the instance's idle timeout, so it sees them closed and opened) a
// calm slice and a slice of `--hold` seconds (5) under the flood, `--rounds` times (4), then a calm
// slice again: the probe's median rate under the flood is printed as a ratio to its median calm
// rate in the same cell (goal >= 0.8x). Alternating slices and medians keep one slow moment of a
// small machine from deciding a cell. The flood runs in a process of its own (flooder.ts) at the
// lowest CPU priority (nice 19): it stands in for an attacker on machines of their own, and on a
// 2-core box an unniced flooder spends on making its requests the cores the server needs, which
// the probe would then measure; the CPU it did spend is printed. Each slice starts once every
// order written so far is paid (up to 30 s), so a slice does not share the cores with the charges
// of the one before. `--flood /,idle` runs only those floods. Ports from `--port` (3300 unless told).
import { randomUUID } from "node:crypto";
import { fork } from "node:child_process";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { choiceFlag, numberFlag } from "../flags";
import { runBench } from "../fail";
import { withOneInstance } from "./cluster";
import { paymentsSettled, settle } from "./pace";
import { checkoutHeaders, orderBody, PROTECTED_PATH } from "./scenarios";
import { percentile } from "../../../tools/stats";
import { IDLE_CONNECTION_MS } from "../../../src/server/edge/open-connections";
import type pg from "pg";

const SLICE_SECONDS = numberFlag("slice", 5);
const HOLD_SECONDS = numberFlag("hold", 5);
/**
 * The idle sockets' flooded slice: past the instance's idle timeout, so that it measures the
 * sockets closed and opened again, not only their first minutes.
 */
const IDLE_HOLD_SECONDS = HOLD_SECONDS + IDLE_CONNECTION_MS / 1000;
const ROUNDS = numberFlag("rounds", 4);
const PROBE_CONNECTIONS = 4;
const GOAL = 0.8;
const PATHS = ["/api/health", "/signin", "/", "/api/webhooks/payments"] as const;
/** `--flood /,/signin`: only these floods (`idle` for the idle sockets); all unless told. */
const CHOSEN: string[] = choiceFlag("flood", [...PATHS, "idle"]);
const FLOODS = [
  ...PATHS.flatMap((p) => [64, 256].map((count) => ({ flood: p as string, count }))),
  { flood: "idle", count: 4_000 },
].filter(({ flood }) => CHOSEN.includes(flood));

/** The probe's answers: 200s on each path, and anything else by status (0: socket errors). */
interface Probe {
  reads: number;
  checkouts: number;
  wallMs: number;
  other: Record<string, number>;
}
interface Attacker {
  answers: Record<string, number>;
  reopened: number;
  cpuMs: number;
}
interface Cell {
  flood: string;
  count: number;
  calm: Probe[];
  flooded: Probe[];
  /** What the server answered the flood, by status, the connections it opened again, its CPU. */
  attacker: Attacker;
}

/** The probe for `seconds`: catalog reads and new-key checkouts side by side. */
async function probe(port: number, productId: string, seconds: number): Promise<Probe> {
  const result: Probe = { reads: 0, checkouts: 0, wallMs: 0, other: {} };
  const started = performance.now();
  const run = (checkout: boolean) => {
    const cannon = autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: PROBE_CONNECTIONS,
      duration: seconds,
      timeout: 10,
      requests: [
        checkout
          ? {
              method: "POST",
              path: PROTECTED_PATH,
              body: orderBody(productId),
              setupRequest: (r) => ({ ...r, headers: checkoutHeaders(randomUUID()) }),
            }
          : { method: "GET", path: "/api/trpc/catalog.list" },
      ],
    });
    cannon.on("response", (_client: unknown, status: number) => {
      if (status !== 200) result.other[status] = (result.other[status] ?? 0) + 1;
      else if (checkout) result.checkouts++;
      else result.reads++;
    });
    return cannon.then((r) => {
      if (r.errors + r.timeouts) result.other[0] = (result.other[0] ?? 0) + r.errors + r.timeouts;
    });
  };
  await Promise.all([run(false), run(true)]);
  result.wallMs = performance.now() - started;
  return result;
}

/** The flood in a process of its own (flooder.ts), once it runs. */
async function startFlood(port: number, flood: string, count: number) {
  const child = fork(
    path.join(import.meta.dirname, "flooder.ts"),
    [String(port), flood, String(count)],
    { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const message = <T>() =>
    new Promise<T>((resolve, reject) => {
      child.once("message", (m) => resolve(m as T));
      child.once("exit", (code) => reject(new Error(`the flooder exited (${code}) unasked`)));
    });
  await message<{ ready: true }>();
  os.setPriority(child.pid!, 19);
  return {
    stop: () => {
      const said = message<Attacker>();
      child.send("stop");
      return said;
    },
  };
}

const perSecond = (p: Probe, of: "reads" | "checkouts") => (p[of] / p.wallMs) * 1000;
const rate = (slices: Probe[], of: "reads" | "checkouts") =>
  percentile(
    slices.map((p) => perSecond(p, of)).sort((a, b) => a - b),
    50,
  );
const ratio = (c: Cell, of: "reads" | "checkouts") => rate(c.flooded, of) / rate(c.calm, of);

/** A calm slice and a flooded one `ROUNDS` times, then a calm slice again. */
async function measure(
  port: number,
  productId: string,
  pool: pg.Pool,
  flood: string,
  count: number,
): Promise<Cell> {
  const cell: Cell = { flood, count, calm: [], flooded: [], attacker: emptyAttacker() };
  const settled = () => paymentsSettled(pool);
  for (let round = 0; round < ROUNDS; round++) {
    await settled();
    cell.calm.push(await probe(port, productId, SLICE_SECONDS));
    await settled();
    const attack = await startFlood(port, flood, count);
    let stopped: Promise<Attacker> | undefined;
    // The flood stops whatever the probe did.
    cell.flooded.push(
      await probe(port, productId, flood === "idle" ? IDLE_HOLD_SECONDS : HOLD_SECONDS).finally(
        () => void (stopped = attack.stop()),
      ),
    );
    addAttacker(cell.attacker, await stopped!);
  }
  await settled();
  cell.calm.push(await probe(port, productId, SLICE_SECONDS));
  return cell;
}

const emptyAttacker = (): Attacker => ({ answers: {}, reopened: 0, cpuMs: 0 });
function addAttacker(sum: Attacker, round: Attacker): void {
  for (const [status, n] of Object.entries(round.answers))
    sum.answers[status] = (sum.answers[status] ?? 0) + n;
  sum.reopened += round.reopened;
  sum.cpuMs += round.cpuMs;
}

const counted = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${k === "0" ? "socket errors" : k}×${n}`)
    .join(", ") || "–";

function sumOther(slices: Probe[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const p of slices)
    for (const [status, n] of Object.entries(p.other)) sum[status] = (sum[status] ?? 0) + n;
  return sum;
}

function print(cells: Cell[]): void {
  console.log(
    `\nonce bench:overload --floods — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores (load average ${os.loadavg()[0]!.toFixed(1)}), ${ROUNDS} rounds of a ${SLICE_SECONDS} s calm slice and a ${HOLD_SECONDS} s flooded one (${IDLE_HOLD_SECONDS} s for the idle sockets, past their idle timeout) and a calm slice after (medians), the flood at nice 19, the probe ${PROBE_CONNECTIONS} + ${PROBE_CONNECTIONS} connections\n`,
  );
  console.log(
    "| flood (anonymous) | connections | catalog.list 200/s: calm → flooded | new-key checkouts 200/s: calm → flooded | the probe's other answers under the flood | the flood's answers (connections opened again; its CPU s) | goal ≥ 0.8× |",
  );
  console.log("|---|---:|---:|---:|---|---|---|");
  for (const c of cells) {
    const text = (of: "reads" | "checkouts") =>
      `${rate(c.calm, of).toFixed(1)} → ${rate(c.flooded, of).toFixed(1)} (${ratio(c, of).toFixed(2)}×)`;
    const worst = Math.min(ratio(c, "reads"), ratio(c, "checkouts"));
    const name = c.flood === "idle" ? "idle keep-alive (after one `GET /api/health`)" : c.flood;
    console.log(
      `| ${name} | ${c.count} | ${text("reads")} | ${text("checkouts")} | ${counted(sumOther(c.flooded))} | ${counted(c.attacker.answers)} (${c.attacker.reopened}; ${(c.attacker.cpuMs / 1000).toFixed(1)}) | **${worst >= GOAL ? "met" : "missed"}** (${worst.toFixed(2)}×) |`,
    );
  }
}

await runBench("bench:overload --floods", (step) =>
  withOneInstance(step, numberFlag("port", 3300), async (instance, db) => {
    step("warming up the probe");
    await probe(instance.port, db.productId, SLICE_SECONDS);
    const cells: Cell[] = [];
    for (const { flood, count } of FLOODS) {
      await settle([instance.pid]);
      step(`${flood} × ${count}, ${ROUNDS} × ${HOLD_SECONDS} s`);
      cells.push(await measure(instance.port, db.productId, db.pool, flood, count));
    }
    print(cells);
  }),
);
