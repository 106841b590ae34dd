// `npm run bench:overload -- --crowd`: a crowd that does not wait. One instance as `npm start` runs
// it (the front door, the admission bound) and, beside it in the same run on the same database, an
// unbounded one (HTTP_MAX_IN_FLIGHT=100000): closed-loop autocannon clients that send again as soon
// as they are answered, whatever the answer (they ignore Retry-After, as most scripts, bots and
// retrying proxies do), at 16, 64, 256 and 1 024 connections, for catalog.list, new-key checkouts
// and replays. Cells alternate between the two instances, CROWD_SECONDS each (4 unless told).
// Printed: answers 200 a second per cell, each as a ratio to the best count's for that path and
// instance, refusals, and a refusal's server CPU against a served catalog read's (from the
// 1 024-connection catalog cell: its CPU less its reads at the 16-connection cell's cost, over its
// refusals).
import { randomUUID } from "node:crypto";
import os from "node:os";
import autocannon from "autocannon";
import {
  ensureBuild,
  startDatabase,
  startInstance,
  startWorkerProcess,
  type Instance,
} from "./cluster";
import { cpuMsOf } from "./cpu";
import { checkoutHeaders, completeKey, orderBody } from "./scenarios";
import { runBench } from "../fail";
import { settle } from "./pace";

const COUNTS = (process.env.CROWD_CONNECTIONS ?? "16,64,256,1024").split(",").map(Number);
const SECONDS = Number(process.env.CROWD_SECONDS ?? 4);
const PATHS = ["catalog.list", "new keys", "replays"] as const;
type Path = (typeof PATHS)[number];

interface Cell {
  served: number;
  refused: number;
  other: number;
  wallMs: number;
  cpuMs: number;
}

async function cell(
  port: number,
  pid: number,
  path: Path,
  connections: number,
  productId: string,
  replayKey: string,
): Promise<Cell> {
  const statuses: Record<number, number> = {};
  const cpuBefore = cpuMsOf([pid]);
  const started = performance.now();
  const body = orderBody(productId);
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: SECONDS,
    timeout: 10,
    requests: [
      path === "catalog.list"
        ? { method: "GET", path: "/api/trpc/catalog.list" }
        : {
            method: "POST",
            path: "/api/trpc/checkout.placeOrder",
            body,
            setupRequest: (request) => ({
              ...request,
              headers: checkoutHeaders(path === "replays" ? replayKey : randomUUID()),
            }),
          },
    ],
  });
  instance.on("response", (_client: unknown, status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  await instance;
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsOf([pid]) - cpuBefore;
  const served = statuses[200] ?? 0;
  const refused = statuses[503] ?? 0;
  const all = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { served, refused, other: all - served - refused, wallMs, cpuMs };
}

await runBench("bench:overload --crowd", async (step) => {
  await ensureBuild(step);
  const db = await startDatabase();
  const base = Number(process.env.BENCH_HTTP_PORT ?? 3300);
  const worker = startWorkerProcess(db.url, db.providerUrl);
  const instances: { name: string; instance: Instance }[] = [];
  try {
    instances.push({
      name: "bounded (as npm start)",
      instance: await startInstance({
        port: base,
        databaseUrl: db.url,
        providerUrl: db.providerUrl,
        paymentJobs: false,
      }),
    });
    instances.push({
      name: "unbounded (HTTP_MAX_IN_FLIGHT=100000)",
      instance: await startInstance({
        port: base + 1,
        databaseUrl: db.url,
        providerUrl: db.providerUrl,
        paymentJobs: false,
        env: { HTTP_MAX_IN_FLIGHT: "100000" },
      }),
    });
    const replayKey = `crowd-replay-${randomUUID()}`;
    await completeKey(`http://127.0.0.1:${base}`, db.productId, replayKey);
    const cells = new Map<string, Cell>();
    const pids = [...instances.map((i) => i.instance.pid), worker.pid];
    for (const path of PATHS)
      for (const connections of COUNTS)
        for (const { name, instance } of instances) {
          await settle(pids);
          step(`${name}: ${path}, ${connections} connections, ${SECONDS} s`);
          cells.set(
            `${name}|${path}|${connections}`,
            await cell(instance.port, instance.pid, path, connections, db.productId, replayKey),
          );
        }
    console.log(
      `\nonce bench:overload --crowd — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores (load average ${os.loadavg()[0]!.toFixed(1)}), closed-loop clients that ignore Retry-After, ${SECONDS} s a cell, cells alternating between the two instances`,
    );
    for (const { name } of instances) {
      console.log(`\n### ${name}\n`);
      console.log(
        `| path | ${COUNTS.map((c) => `${c} conns: 200/s (× best), 503s`).join(" | ")} |`,
      );
      console.log(`|---|${COUNTS.map(() => "---:").join("|")}|`);
      for (const path of PATHS) {
        const row = COUNTS.map((c) => cells.get(`${name}|${path}|${c}`)!);
        const rates = row.map((c) => (c.served / c.wallMs) * 1000);
        const best = Math.max(...rates);
        console.log(
          `| ${path} | ${row.map((c, i) => `${rates[i]!.toFixed(1)} (${(rates[i]! / best).toFixed(2)}), ${c.refused}${c.other ? ` +${c.other} other` : ""}`).join(" | ")} |`,
        );
      }
    }
    const [bounded] = instances;
    const low = cells.get(`${bounded!.name}|catalog.list|${COUNTS[0]}`)!;
    const high = cells.get(`${bounded!.name}|catalog.list|${COUNTS.at(-1)}`)!;
    const readCpu = low.cpuMs / Math.max(1, low.served);
    if (high.refused > 0) {
      const refusalCpu = Math.max(0, high.cpuMs - high.served * readCpu) / high.refused;
      console.log(
        `\nA served catalog read: ${readCpu.toFixed(2)} ms of server CPU (${COUNTS[0]} connections); a refusal: ${refusalCpu.toFixed(3)} ms (${COUNTS.at(-1)} connections: CPU less its reads at that cost, over ${high.refused} refusals) = ${(refusalCpu / readCpu).toFixed(3)}× a read`,
      );
    } else
      console.log(`\nNo refusal at ${COUNTS.at(-1)} connections: a refusal's CPU not measured`);
  } finally {
    for (const { instance } of instances) await instance.stop();
    await worker.stop();
    await db.stop();
  }
});
