// `npx tsx lab/bench/admin-keys.ts`: the admin keys page at scale. Seeds 100 000 keys
// (scripts/seed-keys.ts) into DATABASE_URL, or into a fresh embedded PostgreSQL when it is unset,
// then for every filter:
//   - the full request through the real tRPC HTTP handler in-process (auth, zod, query, JSON),
//     timed over repeated runs (median, p95, max);
//   - EXPLAIN (ANALYZE, BUFFERS) of the page query, naming the index that serves it.
// Then the incident dashboard's views (lab/bench/admin-views.ts) over the same keys, with 129 600
// counter minutes and 20 000 audit entries seeded beside them, and the bulk release of every stuck
// key. Prints Markdown tables. A measurement to cite, not a test: nothing here asserts a time.
import pg from "pg";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../../src/server/api/root";
import { createContextFor } from "../../src/server/api/context";
import { createServerApp } from "../../src/server/app";
import { loadConfig } from "../../src/server/config";
import { createDb } from "../../src/server/db/client";
import { startThrowawayPostgres, type EmbeddedServer } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { randomUUID } from "node:crypto";
import type { Prisma } from "../../src/generated/prisma/client";
import { keyListQuery, type KeyListFilters } from "../../src/server/admin/keys-query";
import { seedKeys } from "../../scripts/seed-keys";
import { FULLEST_DAY, seedAudit, seedCounterMinutes } from "../../scripts/seed-dashboard";

/** Busts and releases in the audit log (each removing its key). */
const AUDITED = 20_000;
import { benchBulkRelease, benchDashboardViews } from "./admin-views";
import { numberFlag } from "./flags";

const COUNT = numberFlag("keys", 100_000);
const RUNS = numberFlag("runs", 30);
const LIMIT = 50;

let server: EmbeddedServer | undefined;
let url = process.env.DATABASE_URL;
if (!url) {
  server = await startThrowawayPostgres("once-bench-admin-");
  await server.createDatabase("bench_admin");
  url = server.url("bench_admin");
  await setupDatabase(url, () => {}, { demo: true });
}

const client = new pg.Client({ connectionString: url });
await client.connect();
const db = createDb(url);
const app = createServerApp(loadConfig({ DEMO_MODE: "1" }), { db });
try {
  // AUDITED more keys than COUNT: the audit's busts and releases remove theirs, leaving COUNT.
  const seeded = await seedKeys(client, COUNT + AUDITED, (line) =>
    process.stderr.write(`[bench:admin] seed: ${line}\n`),
  );
  const minutes = await seedCounterMinutes(client, FULLEST_DAY);
  const audited = await seedAudit(client, seeded.run, AUDITED);
  const total = (await client.query(`SELECT count(*)::int AS n FROM "IdempotencyKey"`)).rows[0]
    .n as number;
  console.log(
    `seeded ${seeded.inserted - audited} keys in ${Math.round(seeded.ms)} ms; the table holds ${total}`,
  );
  console.log(
    `seeded ${minutes} counter minutes and ${audited} audit entries (their keys busted or released, so removed)\n`,
  );

  // A cursor deep in the table: the 90 000th newest key.
  const deep = (
    await client.query(
      `SELECT "createdAt", "id"::text AS id FROM "IdempotencyKey" ORDER BY "createdAt" DESC, "id" DESC OFFSET $1 LIMIT 1`,
      [Math.floor(total * 0.9)],
    )
  ).rows[0] as { createdAt: Date; id: string };
  const deepCursor = `${deep.createdAt.toISOString()}|${deep.id}`;

  const cases: {
    name: string;
    input: Record<string, unknown>;
    filters: KeyListFilters;
    cursor?: { createdAt: Date; id: string };
  }[] = [
    { name: "no filter (first page)", input: {}, filters: {} },
    { name: "no filter, page at 90 %", input: { cursor: deepCursor }, filters: {}, cursor: deep },
    {
      name: "status = COMPLETED (90 %)",
      input: { status: "COMPLETED" },
      filters: { status: "COMPLETED" },
    },
    { name: "status = FAILED (7 %)", input: { status: "FAILED" }, filters: { status: "FAILED" } },
    {
      name: "status = PROCESSING (3 %)",
      input: { status: "PROCESSING" },
      filters: { status: "PROCESSING" },
    },
    { name: "tenant = acme (20 %)", input: { tenant: "acme" }, filters: { scope: "acme" } },
    {
      name: "tenant = acme, page at 90 %",
      input: { tenant: "acme", cursor: deepCursor },
      filters: { scope: "acme" },
      cursor: deep,
    },
    { name: "tenant = nobody (0 rows)", input: { tenant: "nobody" }, filters: { scope: "nobody" } },
    {
      name: "procedure = admin.keys.bust (1 %)",
      input: { procedure: "admin.keys.bust" },
      filters: { procedurePrefix: "admin.keys.bust" },
    },
    { name: "stuck (1.5 %)", input: { stuck: true }, filters: { stuck: true } },
    {
      name: "tenant = acme + status = FAILED",
      input: { tenant: "acme", status: "FAILED" },
      filters: { scope: "acme", status: "FAILED" },
    },
  ];

  const call = async (path: string, input?: unknown, post = false) => {
    const q =
      input === undefined || post ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const headers = {
      authorization: "Bearer admin_demo_token",
      ...(post ? { "content-type": "application/json", "idempotency-key": randomUUID() } : {}),
    };
    const req = new Request(
      `http://localhost/api/trpc/${path}${q}`,
      post ? { method: "POST", headers, body: JSON.stringify(input) } : { headers },
    );
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req,
      router: appRouter,
      createContext: (opts) =>
        createContextFor(app, opts.req.headers, opts.resHeaders, opts.info.calls.length),
    });
    const body = (await res.json()) as { result?: { data: { items?: unknown[] } } };
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return body.result!.data;
  };
  const time = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 3; i++) await fn(); // warm: connections, plan cache, JIT-free paths
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await fn();
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!;
    return { median: at(0.5), p95: at(0.95), max: ms[ms.length - 1]! };
  };

  const plan = async (sql: Prisma.Sql) => {
    const p = (
      await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql.text}`, sql.values)
    ).rows[0]["QUERY PLAN"][0];
    const indexes = new Set<string>();
    const walk = (node: { "Index Name"?: string; "Node Type": string; Plans?: unknown[] }) => {
      if (node["Index Name"]) indexes.add(`${node["Node Type"]} ${node["Index Name"]}`);
      else if (node["Node Type"] === "Seq Scan") indexes.add("Seq Scan");
      for (const child of (node.Plans ?? []) as (typeof node)[]) walk(child);
    };
    walk(p.Plan);
    return { ms: p["Execution Time"] as number, nodes: [...indexes].join(", ") };
  };

  const rows: string[] = [];
  for (const c of cases) {
    const sample = await call("admin.keys.list", { ...c.input, limit: LIMIT });
    const t = await time(() => call("admin.keys.list", { ...c.input, limit: LIMIT }));
    const p = await plan(keyListQuery(c.filters, c.cursor ?? null, LIMIT + 1));
    rows.push(
      `| ${c.name} | ${sample.items?.length ?? 0} | ${t.median.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.max.toFixed(1)} | ${p.ms.toFixed(2)} | ${p.nodes} |`,
    );
  }
  const stats = await time(() => call("admin.stats"));

  console.log(
    `admin.keys.list over ${total} keys, ${RUNS} runs each, limit ${LIMIT}; HTTP = the tRPC handler in-process (ms)\n`,
  );
  console.log(
    "| filter | rows | HTTP median | HTTP p95 | HTTP max | SQL exec (EXPLAIN ANALYZE) | plan |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(r);
  console.log(
    `\nadmin.stats (counts by status, stuck, outbox, counters): median ${stats.median.toFixed(1)} ms, p95 ${stats.p95.toFixed(1)} ms, max ${stats.max.toFixed(1)} ms`,
  );

  const views = {
    client,
    call: (path: string, input?: unknown) => call(path, input),
    mutate: (path: string, input: unknown) => call(path, input, true),
    time,
    plan,
  };
  console.log(
    `\nThe incident dashboard's views over the same ${total} keys (ms; HTTP = the tRPC handler in-process, ${RUNS} runs each)\n`,
  );
  for (const line of await benchDashboardViews(views)) console.log(line);
  console.log(`\n${await benchBulkRelease(views)}`);
} finally {
  await db.$disconnect();
  await client.end();
  await server?.stop();
}
