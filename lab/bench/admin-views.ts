// bench:admin, part two: the incident dashboard's views at scale: a key found by its
// value, procedures by prefix, the key page with its timeline, the audit log's filters, the
// counters chart, the stuck count, and the bulk release's batches. Each through the real tRPC
// handler (timed) and, where one SQL statement is the view, with EXPLAIN ANALYZE naming its index.
import type pg from "pg";
import { Prisma } from "../../src/generated/prisma/client";
import { keyListQuery } from "../../src/server/admin/keys-query";
import { keySearchQuery } from "../../src/server/admin/key-search";
import { counterSeriesQuery } from "../../src/server/admin/counter-series";

export interface ViewBenchContext {
  client: pg.Client;
  call: (path: string, input?: unknown) => Promise<unknown>;
  mutate: (path: string, input: unknown) => Promise<unknown>;
  time: (fn: () => Promise<unknown>) => Promise<{ median: number; p95: number; max: number }>;
  plan: (sql: Prisma.Sql) => Promise<{ ms: number; nodes: string }>;
}

interface ViewCase {
  name: string;
  path: string;
  input: Record<string, unknown>;
  sql?: Prisma.Sql;
}

/** A search for a key's value, through tRPC and as the one SQL statement that serves it. */
function searchCase(q: string, tenant?: string): ViewCase {
  return {
    name: `search "${q.length > 24 ? `${q.slice(0, 22)}…` : q}"${tenant ? ` in ${tenant}` : ""}`,
    path: "admin.keys.search",
    input: { q, ...(tenant ? { tenant } : {}) },
    sql: keySearchQuery(q, tenant, 51),
  };
}

/** The key list filtered by procedure prefix (and optionally stuck leases only). */
function procedureCase(p: string, extra: Record<string, unknown> = {}): ViewCase {
  return {
    name: `list, procedure starts with "${p}"${extra.stuck ? " + stuck" : ""}`,
    path: "admin.keys.list",
    input: { procedure: p, ...extra },
    sql: keyListQuery({ procedurePrefix: p, stuck: extra.stuck as boolean | undefined }, null, 51),
  };
}

/**
 * A seeded key deep in the list (offset 5000, so no view finds it on its first page by luck), its
 * seed run, and a key the audit log names: the views look these up.
 */
async function seededTargets(client: pg.Client) {
  const one = (
    await client.query(
      `SELECT "id"::text AS id, "scope", "key" FROM "IdempotencyKey" WHERE "key" LIKE 'seed-%' ORDER BY "createdAt" DESC OFFSET 5000 LIMIT 1`,
    )
  ).rows[0] as { id: string; scope: string; key: string };
  const run = one.key.split("-")[1];
  const auditKey = (
    await client.query(`SELECT "targetKey" FROM "AuditEntry" WHERE "targetKey" IS NOT NULL LIMIT 1`)
  ).rows[0]?.targetKey as string;
  return { one, run, auditKey };
}

async function cases(client: pg.Client): Promise<ViewCase[]> {
  const { one, run, auditKey } = await seededTargets(client);
  return [
    searchCase(one.key),
    searchCase(one.key, one.scope),
    searchCase(`seed-${run}-1`),
    searchCase("seed-"),
    searchCase("no-such-key"),
    { name: "resolve /admin/keys/<value>", path: "admin.keys.resolve", input: { ref: one.key } },
    { name: "resolve /admin/keys/<row id>", path: "admin.keys.resolve", input: { ref: one.id } },
    { name: "key page (detail, audit, timeline)", path: "admin.keys.byId", input: { id: one.id } },
    procedureCase("checkout."),
    procedureCase("orders."),
    procedureCase("admin."),
    procedureCase("admin.", { stuck: true }),
    { name: "stuck count (all)", path: "admin.keys.stuckCount", input: {} },
    {
      name: "stuck count, acme + checkout.",
      path: "admin.keys.stuckCount",
      input: { tenant: "acme", procedure: "checkout." },
    },
    { name: "audit, no filter", path: "admin.audit.list", input: {} },
    { name: "audit by actor", path: "admin.audit.list", input: { actor: "night@example.com" } },
    { name: "audit by action", path: "admin.audit.list", input: { action: "key.release" } },
    { name: "audit by key", path: "admin.audit.list", input: { key: auditKey } },
    {
      name: "audit by actor + action",
      path: "admin.audit.list",
      input: { actor: "oncall@example.com", action: "key.release" },
    },
    {
      name: "chart, one tenant + procedure",
      path: "admin.counters.series",
      input: { tenant: "acme", procedure: "checkout.placeOrder" },
      sql: counterSeriesQuery({ scope: "acme", procedure: "checkout.placeOrder" }),
    },
    {
      name: "chart, one tenant, every procedure",
      path: "admin.counters.series",
      input: { tenant: "acme" },
      sql: counterSeriesQuery({ scope: "acme" }),
    },
    { name: "stats (every counter, gauges)", path: "admin.stats", input: {} },
  ];
}

export async function benchDashboardViews(ctx: ViewBenchContext): Promise<string[]> {
  const lines = [
    "| view | HTTP median | HTTP p95 | HTTP max | SQL exec | plan |",
    "|---|---|---|---|---|---|",
  ];
  for (const c of await cases(ctx.client)) {
    const input = Object.keys(c.input).length ? c.input : undefined;
    const t = await ctx.time(() =>
      ctx.call(c.path, c.path === "admin.stats" ? undefined : (input ?? {})),
    );
    const plan = c.sql ? await ctx.plan(c.sql) : null;
    lines.push(
      `| ${c.name} | ${t.median.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.max.toFixed(1)} | ${plan ? plan.ms.toFixed(2) : "–"} | ${plan?.nodes ?? "several statements"} |`,
    );
  }
  return lines;
}

/**
 * Releases every stuck seeded key, batch by batch, timing each (a mutation: each batch runs once).
 */
export async function benchBulkRelease(ctx: ViewBenchContext): Promise<string> {
  const times: string[] = [];
  let total = 0;
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    const r = (await ctx.mutate("admin.keys.releaseStuck", { reason: "bench: bulk release" })) as {
      released: number;
      remaining: number;
    };
    times.push(`${r.released} in ${(performance.now() - t0).toFixed(0)} ms`);
    total += r.released;
    if (r.remaining === 0 || r.released === 0) break;
  }
  return `bulk release of ${total} stuck leases, one batch per call: ${times.join(", ")}`;
}
