// `npm run bench:overload -- --floods`: anonymous floods of the routes that are not the API, each
// beside a probe of the API, measured. One instance as `npm start` runs it (the production build
// behind its front door); the probe (autocannon, PROBE_CONNECTIONS connections on each path) sends
// catalog reads and new-key checkouts at the same time for a slice of `--slice` seconds (5). For
// each flood (`GET /api/health`, `GET /signin`, `GET /` and unsigned `POST /api/webhooks/payments`
// at 64 and 256 connections, each sending as fast as it is answered; and 4 000 idle keep-alive
// connections, each after one `GET /api/health`, opened again whenever the server closes one) a
// calm slice, the flood held for `--hold` seconds (10) while the probe runs, and a calm slice
// again: the probe's rate under the flood is printed as a ratio to the mean of its calm rates in
// the same cell (goal >= 0.8x). The flood runs in a process of its own (flooder.ts), so its
// sockets do not share the probe's event loop. Each slice starts once every order written so far
// is paid (up to 30 s), so a slice does not share the cores with the charges of the one before.
// Ports from `--port` (3300 unless told).
import { randomUUID } from "node:crypto";
import { fork } from "node:child_process";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { numberFlag } from "../flags";
import { runBench } from "../fail";
import { withOneInstance } from "./cluster";
import { paymentsSettled, settle } from "./pace";
import { checkoutHeaders, orderBody, PROTECTED_PATH } from "./scenarios";
import type pg from "pg";

const SLICE_SECONDS = numberFlag("slice", 5);
const HOLD_SECONDS = numberFlag("hold", 10);
const PROBE_CONNECTIONS = 4;
const GOAL = 0.8;
const FLOODS = [
  ...["/api/health", "/signin", "/", "/api/webhooks/payments"].flatMap((p) =>
    [64, 256].map((count) => ({ flood: p, count })),
  ),
  { flood: "idle", count: 4_000 },
];

/** The probe's answers: 200s on each path, and anything else by status (0: socket errors). */
interface Probe {
  reads: number;
  checkouts: number;
  wallMs: number;
  other: Record<string, number>;
}
interface Cell {
  flood: string;
  count: number;
  calm: Probe[];
  flooded: Probe;
  /** What the server answered the flood, by status, and the connections it opened again. */
  attacker: { answers: Record<string, number>; reopened: number };
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
  return {
    stop: () => {
      const said = message<Cell["attacker"]>();
      child.send("stop");
      return said;
    },
  };
}

const perSecond = (p: Probe, of: "reads" | "checkouts") => (p[of] / p.wallMs) * 1000;
const calmRate = (c: Cell, of: "reads" | "checkouts") =>
  c.calm.reduce((sum, p) => sum + perSecond(p, of), 0) / c.calm.length;
const ratio = (c: Cell, of: "reads" | "checkouts") => perSecond(c.flooded, of) / calmRate(c, of);

async function measure(
  port: number,
  productId: string,
  pool: pg.Pool,
  flood: string,
  count: number,
): Promise<Cell> {
  const settled = () => paymentsSettled(pool);
  await settled();
  const before = await probe(port, productId, SLICE_SECONDS);
  await settled();
  const attack = await startFlood(port, flood, count);
  let stopped: Promise<Cell["attacker"]> | undefined;
  // The flood stops whatever the probe did.
  const flooded = await probe(port, productId, HOLD_SECONDS).finally(
    () => void (stopped = attack.stop()),
  );
  const attacker = await stopped!;
  await settled();
  const after = await probe(port, productId, SLICE_SECONDS);
  return { flood, count, calm: [before, after], flooded, attacker };
}

const counted = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${k === "0" ? "socket errors" : k}×${n}`)
    .join(", ") || "–";

function print(cells: Cell[]): void {
  console.log(
    `\nonce bench:overload --floods — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores (load average ${os.loadavg()[0]!.toFixed(1)}), each flood held ${HOLD_SECONDS} s, calm slices ${SLICE_SECONDS} s before and after, the probe ${PROBE_CONNECTIONS} + ${PROBE_CONNECTIONS} connections\n`,
  );
  console.log(
    "| flood (anonymous) | connections | catalog.list 200/s: calm → flooded | new-key checkouts 200/s: calm → flooded | the probe's other answers | the flood's answers (connections opened again) | goal ≥ 0.8× |",
  );
  console.log("|---|---:|---:|---:|---|---|---|");
  for (const c of cells) {
    const text = (of: "reads" | "checkouts") =>
      `${calmRate(c, of).toFixed(1)} → ${perSecond(c.flooded, of).toFixed(1)} (${ratio(c, of).toFixed(2)}×)`;
    const worst = Math.min(ratio(c, "reads"), ratio(c, "checkouts"));
    const name = c.flood === "idle" ? "idle keep-alive (after one `GET /api/health`)" : c.flood;
    console.log(
      `| ${name} | ${c.count} | ${text("reads")} | ${text("checkouts")} | ${counted(c.flooded.other)} | ${counted(c.attacker.answers)} (${c.attacker.reopened}) | **${worst >= GOAL ? "met" : "missed"}** (${worst.toFixed(2)}×) |`,
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
      step(`${flood} × ${count}, ${HOLD_SECONDS} s`);
      cells.push(await measure(instance.port, db.productId, db.pool, flood, count));
    }
    print(cells);
  }),
);
