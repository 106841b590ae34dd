// `npx tsx lab/bench/http/profile-route.ts <route> [seconds]`: where one route's server CPU goes.
// One instance as `npm start` runs it (the front door), started under `--cpu-prof`, is loaded with
// one route at 8 connections (`--connections N` after the seconds) after a warm-up; only the samples taken while
// the measured load ran are summarised, by package and by function, beside the CPU of every
// thread of the server (and of any child process) over the same load, from /proc. Routes:
// `catalog` (GET catalog.list, a tRPC query with one SELECT), `bare-catalog` (the same SELECT as
// the least tRPC query: bare-trpc-route.ts), `new-key` (a protected checkout, a new key each),
// `replay` (one completed key). A measurement to read before changing the request path, not a test.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import autocannon, { type AutocannonRequest } from "autocannon";
import { runBench } from "../fail";
import { settle } from "./pace";
import { profileMarkdown } from "./profile";
import { nowUs, profiledInstance } from "./profiled-instance";
import { checkoutHeaders, completeKey, orderBody, PROTECTED_PATH } from "./scenarios";
import { BARE_CATALOG_PATH } from "./bare-trpc-route";
import { numberFlag } from "../flags";

const ROUTES = ["catalog", "bare-catalog", "new-key", "replay"] as const;
type RouteName = (typeof ROUTES)[number];
/** `--connections`: a crowd's profile beside a calm one's (8 unless told). */
const CONNECTIONS = numberFlag("connections", 8);
const TICK_MS = 10; // /proc's clock tick (CLK_TCK 100)

/**
 * CPU ms by thread name of a process and of its descendants (`pid:name`), from /proc: the profile
 * sees the main thread only, /proc's figure also the garbage collector's helpers and libuv's pool.
 */
function cpuByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const visit = (p: number, label: string) => {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${p}/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
        const key = `${label} ${name}`;
        out.set(key, (out.get(key) ?? 0) + ms);
        for (const child of readFileSync(`/proc/${p}/task/${tid}/children`, "utf8").split(" "))
          if (child.trim()) visit(Number(child), `${label} > ${child.trim()}`);
      } catch {
        // a thread that ended meanwhile
      }
    }
  };
  visit(pid, String(pid));
  return out;
}

function threadTable(before: Map<string, number>, after: Map<string, number>, n: number): string {
  const rows = [...after]
    .map(([name, ms]) => [name, ms - (before.get(name) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  return [
    "| thread (process thread-name) | CPU ms | ms per request |",
    "|---|---:|---:|",
    ...rows.map(([name, ms]) => `| ${name} | ${ms} | ${(ms / n).toFixed(3)} |`),
  ].join("\n");
}

function requestsOf(route: RouteName, productId: string, replayKey: string): AutocannonRequest[] {
  if (route === "catalog") return [{ method: "GET", path: "/api/trpc/catalog.list" }];
  if (route === "bare-catalog") return [{ method: "GET", path: BARE_CATALOG_PATH }];
  const key = () => (route === "replay" ? replayKey : randomUUID());
  return [
    {
      method: "POST",
      path: PROTECTED_PATH,
      body: orderBody(productId),
      setupRequest: (request) => ({ ...request, headers: checkoutHeaders(key()) }),
    },
  ];
}

async function load(port: number, requests: AutocannonRequest[], seconds: number) {
  const counts = { answered: 0, other: 0 };
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests,
  });
  instance.on("response", (_client: unknown, status: number) => {
    if (status >= 200 && status < 300) counts.answered++;
    else counts.other++;
  });
  const result = await instance;
  return { ...counts, other: counts.other + result.errors };
}

await runBench("profile-route", async (step) => {
  const route = process.argv[2] as RouteName;
  const seconds = Number(process.argv[3] ?? 10);
  if (!ROUTES.includes(route) || !(seconds > 0)) {
    console.error(`usage: npx tsx lab/bench/http/profile-route.ts <${ROUTES.join("|")}> [seconds]`);
    process.exit(2);
  }
  const { summary, result } = await profiledInstance(
    step,
    { paymentJobs: false }, // the server's own work only: its payments wait in the outbox
    async (instance, db) => {
      const { port } = instance;
      const replayKey = randomUUID();
      await completeKey(`http://127.0.0.1:${port}`, db.productId, replayKey);
      const requests = requestsOf(route, db.productId, replayKey);
      step(`warming up ${route}`);
      await load(port, requests, 3);
      await settle([instance.pid]);
      step(`profiling ${route}, ${CONNECTIONS} connections, ${seconds} s`);
      const fromUs = nowUs();
      const before = cpuByThread(instance.pid);
      const answered = await load(port, requests, seconds);
      const threads = threadTable(before, cpuByThread(instance.pid), answered.answered);
      return { window: { fromUs, toUs: nowUs() }, result: { answered, threads } };
    },
  );
  const { answered, threads } = result;
  console.log(
    `${route}: ${answered.answered} answered 2xx (${answered.other} other), ${summary.totalMs.toFixed(0)} ms of sampled CPU on the main thread, ${(summary.totalMs / answered.answered).toFixed(3)} ms a request\n`,
  );
  console.log(`${threads}\n`);
  console.log(profileMarkdown(summary, answered.answered, 40));
});
