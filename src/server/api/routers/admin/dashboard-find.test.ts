// Issue 11, the dashboard for an incident, part one: keys found by their value (search box and
// /admin/keys/<ref>), procedures by prefix, the stuck lease's wording. Through the real tRPC HTTP
// handler, against a real database.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { adminCalls, callTrpc, TOKENS } from "@/test/http";
import { insertKey } from "../../../../test/admin-factory";

const t = useTestDatabase();

const { query, mutate } = adminCalls(() => t.db);
const keysOf = (items: { key: string }[]) => items.map((i) => i.key);

describe("admin.keys.search: a key by its value", () => {
  it("finds a value exactly or by its start, across tenants or within one, exact match first", async () => {
    await insertKey(t.db, { scope: "acme", key: "order-7f3a" });
    await insertKey(t.db, { scope: "globex", key: "order-7f3a" });
    await insertKey(t.db, { scope: "acme", key: "order-7f3a-retry" });
    await insertKey(t.db, { scope: "acme", key: "order-7f4b" });
    const exact = await query("admin.keys.search", { q: "order-7f3a" });
    expect(exact.items.map((i: { tenant: string; key: string }) => `${i.tenant}/${i.key}`)).toEqual(
      ["acme/order-7f3a", "globex/order-7f3a", "acme/order-7f3a-retry"],
    );
    expect(
      keysOf((await query("admin.keys.search", { q: "order-7f3a", tenant: "globex" })).items),
    ).toEqual(["order-7f3a"]);
    expect((await query("admin.keys.search", { q: "order-7f" })).items).toHaveLength(4);
    expect((await query("admin.keys.search", { q: "order-7f", limit: 2 })).more).toBe(true);
  });

  it("matches % and _ literally, not as wildcards", async () => {
    await insertKey(t.db, { scope: "acme", key: "pct%sign" });
    await insertKey(t.db, { scope: "acme", key: "pctXsign" });
    await insertKey(t.db, { scope: "acme", key: "under_score" });
    await insertKey(t.db, { scope: "acme", key: "underXscore" });
    expect(keysOf((await query("admin.keys.search", { q: "pct%" })).items)).toEqual(["pct%sign"]);
    expect(keysOf((await query("admin.keys.search", { q: "under_" })).items)).toEqual([
      "under_score",
    ]);
  });

  it.each([
    ["an empty query", 400, { q: " " }, TOKENS.admin],
    ["a tenant token", 403, { q: "x" }, TOKENS.acme],
  ])("refuses %s with %i", async (_what, status, input, token) => {
    const res = await callTrpc(t.db, { path: "admin.keys.search", input, token, method: "GET" });
    expect(res.status).toBe(status);
  });
});

describe("admin.keys.resolve: what /admin/keys/<ref> names", () => {
  it("takes a row id or a value (a UUID-shaped value too), and a tenant to choose between tenants", async () => {
    const value = randomUUID();
    const a = await insertKey(t.db, { scope: "acme", key: value });
    const g = await insertKey(t.db, { scope: "globex", key: value });
    expect(
      (await query("admin.keys.resolve", { ref: a.id })).items.map((i: { id: string }) => i.id),
    ).toEqual([a.id]);
    expect(
      (await query("admin.keys.resolve", { ref: value })).items.map((i: { id: string }) => i.id),
    ).toEqual([a.id, g.id]);
    expect(
      (await query("admin.keys.resolve", { ref: value, tenant: "globex" })).items.map(
        (i: { id: string }) => i.id,
      ),
    ).toEqual([g.id]);
    const plain = await insertKey(t.db, { scope: "acme", key: "plain value with spaces" });
    expect(
      (await query("admin.keys.resolve", { ref: "plain value with spaces" })).items.map(
        (i: { id: string }) => i.id,
      ),
    ).toEqual([plain.id]);
  });

  it("names a value that has no row now by its bust in the audit log", async () => {
    const k = await insertKey(t.db, { scope: "acme", key: "busted-earlier" });
    expect((await mutate("admin.keys.bust", { id: k.id, reason: "resolve test" })).status).toBe(
      200,
    );
    const found = await query("admin.keys.resolve", { ref: "busted-earlier" });
    expect(found.items).toEqual([]);
    expect(found.removed).toMatchObject([
      { action: "key.bust", targetId: k.id, targetKey: "busted-earlier", targetScope: "acme" },
    ]);
  });
});

describe("admin.keys.list: procedure by prefix", () => {
  it("matches the start of the name (a full name too), and _ literally", async () => {
    await insertKey(t.db, { scope: "prefix-test", procedure: "refunds.create", key: "p1" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "refunds.cancel", key: "p2" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "refundsXcreate", key: "p3" });
    await insertKey(t.db, { scope: "prefix-test", procedure: "orders.refund_x", key: "p4" });
    const list = async (procedure: string) =>
      keysOf((await query("admin.keys.list", { tenant: "prefix-test", procedure })).items).sort();
    expect(await list("refunds.")).toEqual(["p1", "p2"]);
    expect(await list("refunds.create")).toEqual(["p1"]);
    expect(await list("orders.refund_")).toEqual(["p4"]);
  });

  it("says how long ago a stuck lease ended, by the database's clock", async () => {
    await insertKey(t.db, {
      scope: "lease-test",
      key: "stuck-3min",
      status: "PROCESSING",
      leaseSeconds: -180,
    });
    const [row] = (await query("admin.keys.list", { tenant: "lease-test" })).items;
    expect(row).toMatchObject({ leaseState: "expired" });
    expect(row.leaseRemainingMs).toBeLessThanOrEqual(-180_000);
    expect(row.leaseRemainingMs).toBeGreaterThan(-240_000);
  });
});
