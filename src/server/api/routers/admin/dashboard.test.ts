// Issue 11, the dashboard for an incident: keys found by value, procedures by prefix, the bulk
// release of stuck leases, the audit log's filters, a key's timeline, counters per minute. Through
// the real tRPC HTTP handler, against a real database; every action's stored result is read back.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";
import { insertKey } from "./test-factory";

const t = useTestDatabase();

const query = async <T = any>(path: string, input?: unknown, token: string = TOKENS.admin) => {
  const res = await callTrpc<{ result: { data: T } }>(t.db, { path, input, token, method: "GET" });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data;
};
const mutate = (path: string, input: unknown, key: string = randomUUID()) => callTrpc(t.db, { path, input, token: TOKENS.admin, key, method: "POST" });
const keysOf = (items: { key: string }[]) => items.map((i) => i.key);

/** n stuck keys for `scope`, in one statement: "<prefix>-1" … "<prefix>-n". */
async function insertStuck(scope: string, prefix: string, n: number, procedure = "checkout.placeOrder") {
  await t.db.$executeRaw`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT ${scope}, ${prefix} || '-' || i, ${procedure}, repeat('0', 64), 'PROCESSING', gen_random_uuid(), now() - interval '3 minutes', now() + interval '1 day'
    FROM generate_series(1, ${n}::int) AS i`;
}

describe("admin.keys.search: a key by its value", () => {
  it("finds a value exactly or by its start, across tenants or within one, exact match first", async () => {
    await insertKey(t.db, { scope: "acme", key: "order-7f3a" });
    await insertKey(t.db, { scope: "globex", key: "order-7f3a" });
    await insertKey(t.db, { scope: "acme", key: "order-7f3a-retry" });
    await insertKey(t.db, { scope: "acme", key: "order-7f4b" });
    const exact = await query("admin.keys.search", { q: "order-7f3a" });
    expect(exact.items.map((i: { tenant: string; key: string }) => `${i.tenant}/${i.key}`)).toEqual(["acme/order-7f3a", "globex/order-7f3a", "acme/order-7f3a-retry"]);
    expect(keysOf((await query("admin.keys.search", { q: "order-7f3a", tenant: "globex" })).items)).toEqual(["order-7f3a"]);
    expect((await query("admin.keys.search", { q: "order-7f" })).items).toHaveLength(4);
    expect((await query("admin.keys.search", { q: "order-7f", limit: 2 })).more).toBe(true);
  });

  it("matches % and _ literally, not as wildcards", async () => {
    await insertKey(t.db, { scope: "acme", key: "pct%sign" });
    await insertKey(t.db, { scope: "acme", key: "pctXsign" });
    await insertKey(t.db, { scope: "acme", key: "under_score" });
    await insertKey(t.db, { scope: "acme", key: "underXscore" });
    expect(keysOf((await query("admin.keys.search", { q: "pct%" })).items)).toEqual(["pct%sign"]);
    expect(keysOf((await query("admin.keys.search", { q: "under_" })).items)).toEqual(["under_score"]);
  });

  it("refuses an empty query (400) and a tenant token (403)", async () => {
    expect((await callTrpc(t.db, { path: "admin.keys.search", input: { q: " " }, token: TOKENS.admin, method: "GET" })).status).toBe(400);
    expect((await callTrpc(t.db, { path: "admin.keys.search", input: { q: "x" }, token: TOKENS.acme, method: "GET" })).status).toBe(403);
  });
});

describe("admin.keys.resolve: what /admin/keys/<ref> names", () => {
  it("takes a row id or a value (a UUID-shaped value too), and a tenant to choose between tenants", async () => {
    const value = randomUUID();
    const a = await insertKey(t.db, { scope: "acme", key: value });
    const g = await insertKey(t.db, { scope: "globex", key: value });
    expect((await query("admin.keys.resolve", { ref: a.id })).items.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect((await query("admin.keys.resolve", { ref: value })).items.map((i: { id: string }) => i.id)).toEqual([a.id, g.id]);
    expect((await query("admin.keys.resolve", { ref: value, tenant: "globex" })).items.map((i: { id: string }) => i.id)).toEqual([g.id]);
    const plain = await insertKey(t.db, { scope: "acme", key: "plain value with spaces" });
    expect((await query("admin.keys.resolve", { ref: "plain value with spaces" })).items.map((i: { id: string }) => i.id)).toEqual([plain.id]);
  });

  it("names a value that has no row now by its bust in the audit log", async () => {
    const k = await insertKey(t.db, { scope: "acme", key: "busted-earlier" });
    expect((await mutate("admin.keys.bust", { id: k.id, reason: "resolve test" })).status).toBe(200);
    const found = await query("admin.keys.resolve", { ref: "busted-earlier" });
    expect(found.items).toEqual([]);
    expect(found.removed).toMatchObject([{ action: "key.bust", targetId: k.id, targetKey: "busted-earlier", targetScope: "acme" }]);
  });
});

describe("admin.keys.list: procedure by prefix", () => {
  it("matches the start of the name (a full name too), and _ literally", async () => {
    await insertKey(t.db, { scope: "prefix-test", procedure: "refunds.create", key: "p1" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "refunds.cancel", key: "p2" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "refundsXcreate", key: "p3" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "orders.refund_x", key: "p4" });
    const list = async (procedure: string) => keysOf((await query("admin.keys.list", { tenant: "prefix-test", procedure })).items).sort();
    expect(await list("refunds.")).toEqual(["p1", "p2"]);
    expect(await list("refunds.create")).toEqual(["p1"]);
    expect(await list("orders.refund_")).toEqual(["p4"]);
  });

  it("says how long ago a stuck lease ended, by the database's clock", async () => {
    await insertKey(t.db, { scope: "lease-test", key: "stuck-3min", status: "PROCESSING", leaseSeconds: -180 });
    const [row] = (await query("admin.keys.list", { tenant: "lease-test" })).items;
    expect(row).toMatchObject({ leaseState: "expired" });
    expect(row.leaseRemainingMs).toBeLessThanOrEqual(-180_000);
    expect(row.leaseRemainingMs).toBeGreaterThan(-240_000);
  });
});

describe("admin.keys.releaseStuck: the stuck leases a filter selects", () => {
  const releaseAll = (input: Record<string, unknown>, key?: string) => mutate("admin.keys.releaseStuck", { reason: "instance b7 died", ...input }, key);
  const stuckLeft = async (scope: string) =>
    (await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM "IdempotencyKey" WHERE "scope" = ${scope} AND "status" = 'PROCESSING' AND "leaseExpiresAt" <= now()`)[0]!.n;

  it("releases in bounded batches, audits each key with the one reason, and leaves live and finished keys", async () => {
    await insertStuck("bulk", "dead", 505);
    await insertStuck("bulk", "other-proc", 3, "orders.cancel");
    const live = await insertKey(t.db, { scope: "bulk", key: "live", status: "PROCESSING", leaseSeconds: 120 });
    const done = await insertKey(t.db, { scope: "bulk", key: "done", status: "COMPLETED" });
    const first = await releaseAll({ tenant: "bulk", procedure: "checkout." });
    expect(first.status).toBe(200);
    expect(first.json.result.data).toMatchObject({ released: 500, remaining: 5 });
    const second = await releaseAll({ tenant: "bulk", procedure: "checkout." });
    expect(second.json.result.data).toMatchObject({ released: 5, remaining: 0 });
    expect(await stuckLeft("bulk")).toBe(3); // orders.cancel: outside the filter
    expect(await t.db.idempotencyKey.count({ where: { id: { in: [live.id, done.id] } } })).toBe(2);
    const audit = await t.db.auditEntry.findMany({ where: { targetScope: "bulk", action: "key.release" } });
    expect(audit).toHaveLength(505);
    expect(new Set(audit.map((a) => a.targetKey)).size).toBe(505);
    expect(audit.every((a) => a.reason === "instance b7 died" && a.actor === "admin@example.com")).toBe(true);
    const one = audit.find((a) => a.targetKey === "dead-7")!;
    expect(one.details).toMatchObject({ tenant: "bulk", key: "dead-7", procedure: "checkout.placeOrder", status: "PROCESSING", leaseState: "expired", attempts: 1 });
    // The key's timeline reads the bulk entry like a single release.
    const { timeline } = await query("admin.keys.byId", { id: one.targetId });
    expect(timeline.map((e: { kind: string }) => e.kind)).toEqual(["reserved", "released"]);
  });

  it("is idempotent itself: the same admin key replays the first batch's answer and releases nothing more", async () => {
    await insertStuck("bulk-replay", "k", 3);
    const adminKey = randomUUID();
    const first = await releaseAll({ tenant: "bulk-replay" }, adminKey);
    await insertStuck("bulk-replay", "later", 2);
    const again = await releaseAll({ tenant: "bulk-replay" }, adminKey);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await stuckLeft("bulk-replay")).toBe(2);
  });

  it("never releases a key a retry is taking over meanwhile (locked: skipped; its lease is live after)", async () => {
    await insertStuck("bulk-race", "r", 2);
    const taken = await t.db.idempotencyKey.findFirstOrThrow({ where: { scope: "bulk-race", key: "r-1" } });
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query(`UPDATE "IdempotencyKey" SET "leaseExpiresAt" = now() + interval '1 minute', "attempts" = "attempts" + 1 WHERE "id" = $1`, [taken.id]);
      const res = await releaseAll({ tenant: "bulk-race" });
      expect(res.json.result.data).toMatchObject({ released: 1 });
      await other.query("COMMIT");
    } finally {
      await other.end();
    }
    expect(await t.db.idempotencyKey.findUnique({ where: { id: taken.id } })).toMatchObject({ status: "PROCESSING", attempts: 2 });
    expect(await t.db.auditEntry.count({ where: { targetId: taken.id } })).toBe(0);
  });

  it("needs a reason and an Idempotency-Key", async () => {
    expect((await releaseAll({ tenant: "x", reason: "" })).status).toBe(400);
    const noKey = await callTrpc(t.db, { path: "admin.keys.releaseStuck", input: { reason: "because" }, token: TOKENS.admin, method: "POST" });
    expect(noKey.json.error.data.reason).toBe("idempotency_key_missing");
  });
});

describe("admin.audit.list filters", () => {
  it("filters by actor, action and key value, and names the key by value", async () => {
    const a = await insertKey(t.db, { scope: "audit-f", key: "audited-a", status: "COMPLETED" });
    const b = await insertKey(t.db, { scope: "audit-f", key: "audited-b", status: "PROCESSING", leaseSeconds: -60 });
    expect((await mutate("admin.keys.bust", { id: a.id, reason: "filter test a" })).status).toBe(200);
    expect((await mutate("admin.keys.release", { id: b.id, reason: "filter test b" })).status).toBe(200);
    await t.db.auditEntry.create({ data: { actor: "someone@else.example", action: "key.bust", targetType: "IdempotencyKey", targetId: randomUUID(), targetScope: "audit-f", targetKey: "audited-c", reason: "by another" } });
    const list = async (input: Record<string, unknown>) => (await query("admin.audit.list", { tenant: "audit-f", ...input })).items as { targetKey: string; action: string }[];
    expect((await list({ key: "audited-a" })).map((e) => [e.targetKey, e.action])).toEqual([["audited-a", "key.bust"]]);
    expect((await list({ action: "key.release" })).map((e) => e.targetKey)).toEqual(["audited-b"]);
    expect((await list({ actor: "someone@else.example" })).map((e) => e.targetKey)).toEqual(["audited-c"]);
    expect((await list({ actor: "admin@example.com", action: "key.bust" })).map((e) => e.targetKey)).toEqual(["audited-a"]);
  });
});

describe("admin.keys.byId: the timeline", () => {
  it("tells a value's rows apart: reserved, completed, busted (who, why), reserved again, taken over, stuck", async () => {
    const first = await insertKey(t.db, { scope: "tl", key: "tl-1", status: "COMPLETED", createdAt: "2026-11-01T10:00:00Z" });
    expect((await mutate("admin.keys.bust", { id: first.id, reason: "customer asked" })).status).toBe(200);
    // The history as it happened, at literal times: the bust at 11:00, the value used again at 12:00,
    // taken over twice (the last time 30 s before its lease ended two minutes ago).
    await t.db.auditEntry.updateMany({ where: { targetId: first.id }, data: { createdAt: new Date("2026-11-01T11:00:00Z") } });
    const second = await insertKey(t.db, { scope: "tl", key: "tl-1", status: "PROCESSING", leaseSeconds: -120, attempts: 3, createdAt: "2026-11-01T12:00:00Z" });
    await t.db.$executeRaw`UPDATE "IdempotencyKey" SET "updatedAt" = "leaseExpiresAt" - interval '30 seconds' WHERE "id" = ${second.id}::uuid`;
    const { timeline } = await query("admin.keys.byId", { id: second.id });
    expect(timeline.map((e: { kind: string; rowId: string }) => `${e.kind}:${e.rowId === first.id ? 1 : 2}`)).toEqual([
      "reserved:1",
      "completed:1",
      "busted:1",
      "reserved:2",
      "taken_over:2",
      "lease:2",
    ]);
    const busted = timeline.find((e: { kind: string }) => e.kind === "busted");
    expect(busted).toMatchObject({ actor: "admin@example.com", reason: "customer asked" });
    expect(timeline.find((e: { kind: string }) => e.kind === "lease").text).toMatch(/^lease expired 2 min ago \(stuck\)$/);
    expect(timeline.find((e: { kind: string }) => e.kind === "taken_over").text).toMatch(/taken over 2 times/);
  });
});

describe("admin.counters.series", () => {
  it("counts per minute for the last 24 h, zeros where nothing was counted, per tenant and one or every procedure", async () => {
    const now = (await t.db.$queryRaw<{ m: Date }[]>`SELECT date_trunc('minute', now()) AS m`)[0]!.m;
    const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
    await t.db.idempotencyCounterMinute.createMany({
      data: [
        { scope: "series", procedure: "checkout.placeOrder", event: "executed", minute: at(0), count: 5n },
        { scope: "series", procedure: "checkout.placeOrder", event: "executed", minute: at(10), count: 2n },
        { scope: "series", procedure: "checkout.placeOrder", event: "conflicts", minute: at(10), count: 1n },
        { scope: "series", procedure: "checkout.placeOrder", event: "executed", minute: at(24 * 60 + 5), count: 99n }, // too old
        { scope: "series", procedure: "orders.cancel", event: "executed", minute: at(0), count: 7n },
        { scope: "series-other", procedure: "checkout.placeOrder", event: "store_errors", minute: at(3), count: 4n },
      ],
    });
    const s = await query("admin.counters.series", { tenant: "series", procedure: "checkout.placeOrder" });
    expect(s.minutes).toBe(1440);
    expect(s.series.executed).toHaveLength(1440);
    expect(s.series.executed[1439]).toBe(5);
    expect(s.series.executed[1429]).toBe(2);
    expect(s.series.conflicts[1429]).toBe(1);
    expect(s.totals).toEqual({ executed: 7, replayed: 0, conflicts: 1, mismatches: 0, store_errors: 0 });
    expect(new Date(s.from).getTime()).toBe(at(1439).getTime());
    const tenant = await query("admin.counters.series", { tenant: "series" });
    expect(tenant.totals).toMatchObject({ executed: 14, store_errors: 0 });
    expect(tenant.series.executed[1439]).toBe(12);
    expect((await callTrpc(t.db, { path: "admin.counters.series", input: {}, token: TOKENS.admin, method: "GET" })).status).toBe(400);
  });
});
