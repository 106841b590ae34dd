// An attack on the reconciliation runner's memory: a provider whose charge list never ends. Every
// page holds 100 charges (distinct ids, random amounts, orders the shop never had; one in ten
// succeeded, so a finding) and says there is a next one. The job runs where it runs in
// production, in `npm run worker` (a process of its own), against a hostile provider of the test's
// own on a free port; the run's own page budget stops it after about 1 000 pages. The runner holds
// one page at a time, so the worker's resident memory at its peak stays within 64 MB of what it
// held idle before the run.
//
// The worker's first run reads a short, ordinary list (it warms what any run warms: compiled code,
// the Prisma client's statements, its connections), then it idles for the job's interval. The
// second run's first call finds it idle: its VmRSS is read from /proc/<pid>/status and its peak
// (VmHWM) reset. That run gets the endless list. The third run's first call says the second has
// ended: VmHWM is then the most the worker held at any moment of it.
//
// Two choices make the figure say what the runner keeps rather than when V8 collects:
// - Each charge names its order at length (1 KB), as a hostile provider may: the 1 000 pages then
//   weigh 100 MB, which a runner that kept them could not hide (with 36-character references all
//   1 000 pages parse to about 20 MB, under the budget whichever way they are read).
// - The worker's heap is capped (NODE_OPTIONS) as a process with a memory budget would run. With
//   Node's defaults V8 lets garbage pile up before a full collection: its heap after each one stays
//   at about 32 MB through the run, while the resident memory of a runner that holds one page
//   climbs 70 to 190 MB above idle.
// A runner that kept every page fails here: it runs out of its heap part-way through the attack.
import { randomBytes, randomInt, randomUUID } from "node:crypto";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { startWorker, type WorkerProcess } from "../test/worker-process";
import { stopChild } from "../../tools/process";

const t = useTestDatabase();
const MiB = 1024 * 1024;
const PAGE_SIZE = 100;
/** The attack's length, and what it may cost the worker. */
const ATTACK_PAGES = 1_000;
const MEMORY_BUDGET_BYTES = 64 * MiB;
/** The first run's ordinary list: long enough to judge pages like the attack's. */
const WARM_UP_PAGES = 50;

/** A number of kB from /proc/<pid>/status (`VmRSS`, `VmHWM`), in bytes. */
function procStatus(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kB = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1];
  if (kB === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kB) * 1024;
}

/** Starts the process's peak resident set (VmHWM) again from its present size. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** What the hostile provider saw of the worker's runs. */
interface Watch {
  pid?: number;
  /** Runs started: each begins by asking for the provider's oldest charge (limit 1). */
  runs: number;
  /** Full pages served in the attack run. */
  attackPages: number;
  idleRss?: number;
  peakRss?: number;
  /** Called when the attack run has ended (the next run starts). */
  onEnd: () => void;
}

function charges(n: number, gte: number, lt: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `ch_${randomBytes(12).toString("hex")}`,
    status: randomInt(10) === 0 ? "SUCCEEDED" : "FAILED",
    // An order the shop never had, named at length: 1 KB of random text.
    reference: `order-${randomUUID()}-${randomBytes(490).toString("hex")}`,
    amountCents: randomInt(1, 1_000_000),
    currency: "EUR",
    // Inside the asked range: a list that runs on through it, never one that loops.
    created: gte + ((lt - gte) * i) / n,
  }));
}

/**
 * The provider's list: an ordinary one in the first run, one that never ends in the second, an
 * empty one after. A lookup by key finds nothing.
 */
function hostile(watch: Watch) {
  let warmUpPages = 0;
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://hostile");
    const limit = Math.min(Number(url.searchParams.get("limit") ?? PAGE_SIZE), PAGE_SIZE);
    if (limit === 1 && !url.searchParams.has("idempotency_key")) startOfRun(watch);
    const gte = Number(url.searchParams.get("created[gte]") ?? 1_700_000_000);
    const lt = Number(url.searchParams.get("created[lt]") ?? gte + 60);
    let data: ReturnType<typeof charges> = [];
    if (!url.searchParams.has("idempotency_key") && watch.runs <= 2) data = charges(limit, gte, lt);
    if (watch.runs === 1 && limit === PAGE_SIZE) warmUpPages += 1;
    if (watch.runs === 2 && limit === PAGE_SIZE) watch.attackPages += 1;
    const hasMore = watch.runs === 2 || (watch.runs === 1 && warmUpPages < WARM_UP_PAGES);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data, has_more: data.length > 0 && hasMore }));
  };
}

function startOfRun(watch: Watch): void {
  watch.runs += 1;
  if (watch.runs === 2) {
    watch.idleRss = procStatus(watch.pid!, "VmRSS");
    resetPeak(watch.pid!);
  }
  if (watch.runs === 3) {
    watch.peakRss = procStatus(watch.pid!, "VmHWM");
    watch.onEnd();
  }
}

const servers: http.Server[] = [];
const workers: WorkerProcess[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await stopChild(worker.child);
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});

async function hostileProvider(watch: Watch): Promise<string> {
  const server = http.createServer(hostile(watch));
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("a provider whose list never ends", () => {
  it(
    "costs the worker at most 64 MB above its idle memory over 1 000 pages",
    { timeout: 300_000 },
    async () => {
      let onEnd = () => {};
      const ended = new Promise<void>((resolve) => (onEnd = resolve));
      const watch: Watch = { runs: 0, attackPages: 0, onEnd };
      const url = await hostileProvider(watch);
      const worker = await startWorker(
        {
          ...process.env,
          DATABASE_URL: t.url,
          DEMO_MODE: "1",
          PAYMENTS_PROVIDER_URL: url,
          // The job every second: the worker idles for a second between the runs.
          RECONCILE_INTERVAL_MS: "1000",
          // As in production: each finding is a line of the worker's log.
          LOG_LEVEL: "info",
          // Old space 64 MB (twice what the run keeps live), young space 4 MB a half.
          NODE_OPTIONS: "--max-old-space-size=64 --max-semi-space-size=4",
        },
        60_000,
        // The run's budget, named: the main list may use 90% of the pages (the rest is kept for
        // lookups by key) and the first call reads one charge, so 1 120 pages let the list read
        // just over 1 000 of them; the time is no limit here, the pages are.
        "src/test/long-budget-worker.ts",
      );
      workers.push(worker);
      watch.pid = worker.child.pid;
      // A worker that dies (out of memory, say) ends the test with what it said.
      const died = once(worker.child, "exit").then(
        ([code, signal]) =>
          `the worker exited (${code ?? signal}): ${worker.output().slice(-2000)}`,
      );
      expect(await Promise.race([ended.then(() => "the attack run ended"), died])).toBe(
        "the attack run ended",
      );

      // The attack was read, and the run's own budget is what stopped it.
      expect(watch.attackPages).toBeGreaterThanOrEqual(ATTACK_PAGES);
      expect(worker.output()).toMatch(
        /\[reconciliation\] run stopped early: it read its 1120 pages/,
      );
      const { idleRss, peakRss } = watch;
      const figures = `idle ${(idleRss! / MiB).toFixed(1)} MB, peak ${(peakRss! / MiB).toFixed(1)} MB over ${watch.attackPages} pages`;
      console.log(`the worker's memory: ${figures}`);
      expect(peakRss! - idleRss!, figures).toBeLessThanOrEqual(MEMORY_BUDGET_BYTES);
    },
  );
});
