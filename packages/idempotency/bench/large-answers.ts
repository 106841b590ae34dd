// `npx tsx packages/idempotency/bench/large-answers.ts` (from the repository's root): what 8
// answers of 50 MiB at once cost the server process, above its idle memory (RSS), through the HTTP
// layer and toNodeHandler. Three servers, each in its own process: the same streamed handler
// without idempotency (the floor), protected (the layer streams what is past maxStoredBodyBytes),
// and protected with the handler's body read whole first (what the layer did before it streamed).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { startTestServer } from "../test/support/postgres";

const ANSWERS = 8;
const ANSWER_BYTES = 50 * 1024 * 1024;
const MiB = 1024 * 1024;

/** The process's resident memory, in bytes, from /proc (Linux). */
async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function startServer(mode: string, databaseUrl: string) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./large-answers-server.ts", import.meta.url).pathname, mode],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { child, base: `http://127.0.0.1:${Number(line.toString().trim())}` };
}

/** Sends one request and reads its answer to the end, keeping nothing; returns the bytes read. */
async function fetchAndDiscard(base: string, size: number): Promise<number> {
  const res = await fetch(`${base}/exports?bytes=${size}`, {
    method: "POST",
    headers: { "idempotency-key": randomUUID(), "content-type": "application/json" },
    body: "{}",
  });
  let bytes = 0;
  const reader = res.body!.getReader();
  for (let part = await reader.read(); !part.done; part = await reader.read())
    bytes += part.value.byteLength;
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  return bytes;
}

async function measure(mode: string, databaseUrl: string) {
  const { child, base } = await startServer(mode, databaseUrl);
  try {
    // Warm the code paths with small answers (1 KiB, then 2 MiB: past the stored-size limit), so
    // that idle is a server that has served, not one that has never loaded its modules.
    for (const size of [1024, 1024, 2 * MiB, 2 * MiB]) await fetchAndDiscard(base, size);
    const idle = await rssOf(child.pid!);
    let peak = idle;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssOf(child.pid!));
        await new Promise((resolve) => setTimeout(resolve, 5)); // a sampling period, not a wait
      }
    })();
    const started = performance.now();
    const sizes = await Promise.all(
      Array.from({ length: ANSWERS }, () => fetchAndDiscard(base, ANSWER_BYTES)),
    );
    const ms = performance.now() - started;
    sampling = false;
    await sampler;
    if (sizes.some((size) => size !== ANSWER_BYTES)) throw new Error(`short answer: ${sizes}`);
    return { mode, idle, peak, above: peak - idle, ms };
  } finally {
    stop(child);
  }
}

function stop(child: ChildProcess) {
  if (child.exitCode === null) child.kill("SIGTERM");
}

const server = await startTestServer("bench-large-");
try {
  const admin = new pg.Client({ connectionString: server.url("postgres") });
  await admin.connect();
  await admin.query(await readFile(new URL("../sql/migration.sql", import.meta.url), "utf8"));
  await admin.end();
  const results = [];
  for (const mode of ["plain", "protected", "buffered"])
    results.push(await measure(mode, server.url("postgres")));
  const floor = results[0]!;
  console.log(`${ANSWERS} answers of ${ANSWER_BYTES / MiB} MiB at once; server RSS (MiB):`);
  for (const r of results)
    console.log(
      `  ${r.mode.padEnd(9)} idle ${(r.idle / MiB).toFixed(0)}, peak ${(r.peak / MiB).toFixed(0)}, above idle ${(r.above / MiB).toFixed(1)} (${(r.above / Math.max(floor.above, 1)).toFixed(2)}× the floor's), ${(r.ms / 1000).toFixed(1)} s`,
    );
  const protectedRun = results[1]!;
  const limit = 64 * MiB;
  console.log(
    protectedRun.above < limit
      ? `protected: ${(protectedRun.above / MiB).toFixed(1)} MiB above idle, under 64 MiB`
      : `protected: ${(protectedRun.above / MiB).toFixed(1)} MiB above idle, OVER 64 MiB`,
  );
  process.exitCode = protectedRun.above < limit ? 0 : 1;
} finally {
  await server.destroy();
}
