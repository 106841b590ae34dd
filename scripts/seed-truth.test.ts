// Seeded data a dashboard can show truthfully: 10 000 keys with their counters and audit log, then
// every key's timeline (as the dashboard builds it) agrees with its state, and every counter and
// key names a mutation of the app's router under the scope that really calls it.
import type { AnyProcedure } from "@trpc/server";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTimeline, type AuditForTimeline } from "../src/server/admin/timeline";
import { appRouter } from "../src/server/api/root";
import { useTestDatabase } from "../src/test/database";
import { seedAudit, seedCounterMinutes } from "./seed-dashboard";
import { ADMIN_SCOPE, SEED_TENANTS } from "./seed-data";
import { auditedOf, seedKeys } from "./seed-keys";

const t = useTestDatabase({ poolMax: 2 });
const SEEDED = 10_000;
let pool: pg.Pool;
let run: string;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: t.url, max: 1 });
  ({ run } = await seedKeys(pool, SEEDED));
  await seedCounterMinutes(pool);
  expect(await seedAudit(pool, run, auditedOf(SEEDED))).toBe(1_000);
}, 120_000);
afterAll(async () => {
  await pool?.end();
});

/** The app router's mutations: operators' under `admin.`, tenants' the rest. */
function mutations(): { admin: Set<string>; tenant: Set<string> } {
  const procedures = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
  const paths = Object.entries(procedures)
    .filter(([, p]) => p._def.type === "mutation")
    .map(([path]) => path);
  return {
    admin: new Set(paths.filter((p) => p.startsWith("admin."))),
    tenant: new Set(paths.filter((p) => !p.startsWith("admin."))),
  };
}

describe("seeded keys, counters and audit log", () => {
  it("every counter and key names a mutation of the app router, under its own kind of scope", async () => {
    const { admin, tenant } = mutations();
    expect(tenant.has("checkout.placeOrder")).toBe(true);
    const pairs = await t.db.$queryRaw<{ scope: string; procedure: string; source: string }[]>`
      SELECT DISTINCT "scope", "procedure", 'minute' AS "source" FROM "IdempotencyCounterMinute"
      UNION SELECT DISTINCT "scope", "procedure", 'total' FROM "IdempotencyCounter"
      UNION SELECT DISTINCT "scope", "procedure", 'key' FROM "IdempotencyKey" WHERE "key" LIKE 'seed-%'`;
    expect(new Set(pairs.map((p) => p.source))).toEqual(new Set(["minute", "total", "key"]));
    const wrong = pairs.filter((p) =>
      p.scope === ADMIN_SCOPE
        ? !admin.has(p.procedure)
        : !(SEED_TENANTS as readonly string[]).includes(p.scope) || !tenant.has(p.procedure),
    );
    expect(wrong).toEqual([]);
    // Both kinds are there: the dashboard's tenant picker shows operators' actions too.
    expect(pairs.some((p) => p.scope === ADMIN_SCOPE)).toBe(true);
  });

  it("no key in place has a bust or release, and every audited key's timeline ends in its removal", async () => {
    const inPlace = await t.db.$queryRaw<[{ n: number }]>`
      SELECT count(*)::int AS "n" FROM "AuditEntry" a JOIN "IdempotencyKey" k ON k."id"::text = a."targetId"`;
    expect(inPlace[0].n).toBe(0);
    expect(
      await t.db.idempotencyKey.count({ where: { key: { startsWith: `seed-${run}-` } } }),
    ).toBe(SEEDED - 1_000);

    const entries: AuditForTimeline[] = await t.db.auditEntry.findMany({
      select: {
        id: true,
        actor: true,
        action: true,
        targetId: true,
        reason: true,
        details: true,
        createdAt: true,
      },
    });
    expect(entries).toHaveLength(1_000);
    const contradictions: string[] = [];
    for (const entry of entries) {
      const details = entry.details as { status: string; leaseExpiresAt: string | null };
      const timeline = buildTimeline(null, [entry]);
      const kinds = timeline.map((e) => e.kind);
      const removal = entry.action === "key.release" ? "released" : "busted";
      // Reserved first, then its outcome if it had one, then the operator's removal.
      const expected =
        details.status === "PROCESSING"
          ? ["reserved", removal]
          : ["reserved", details.status === "COMPLETED" ? "completed" : "failed", removal];
      if (kinds.filter((k) => k !== "taken_over").join() !== expected.join())
        contradictions.push(`${entry.targetId}: ${kinds.join(" → ")}`);
      // A release frees a stuck lease only: PROCESSING, and after its lease ended; a bust a
      // finished key.
      const stuckThen =
        details.status === "PROCESSING" &&
        details.leaseExpiresAt !== null &&
        new Date(details.leaseExpiresAt) < entry.createdAt;
      if ((entry.action === "key.release") !== stuckThen)
        contradictions.push(`${entry.targetId}: ${entry.action} of a ${details.status} key`);
      if (entry.createdAt.getTime() > Date.now())
        contradictions.push(`${entry.targetId}: in the future`);
    }
    expect(contradictions).toEqual([]);
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(["key.bust", "key.release"]));
  });
});
