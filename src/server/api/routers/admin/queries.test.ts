// admin.keys.list / byId, admin.outbox.*, admin.audit.list and admin.stats against a real database.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { adminCalls, callTrpc, TOKENS } from "@/test/http";
import { engineFor } from "@/test/app";
import { insertKey, insertOutbox, type KeyFixture } from "../../../../test/admin-factory";

const t = useTestDatabase();

const query = (path: string, input?: unknown, token: string = TOKENS.admin) =>
  callTrpc(t.db, { path, input, token, method: "GET" });
const list = async (input: Record<string, unknown> = {}) => {
  const res = await query("admin.keys.list", input);
  expect(res.status).toBe(200);
  return res.json.result.data as {
    items: { id: string; key: string; status: string; leaseState: string; tenant: string }[];
    nextCursor: string | null;
  };
};

describe("admin.keys.list", () => {
  beforeAll(async () => {
    // Literal, distinct creation times, a second apart: newest first is k5, k4, … k1.
    const keys: KeyFixture[] = [
      { key: "k1", scope: "acme", status: "COMPLETED" },
      { key: "k2", scope: "globex", status: "FAILED" },
      { key: "k3", scope: "acme", status: "PROCESSING", leaseSeconds: -10 },
      {
        key: "k4",
        scope: "acme",
        status: "PROCESSING",
        leaseSeconds: 60,
        procedure: "orders.cancel",
      },
      { key: "k5", scope: "globex", status: "COMPLETED" },
    ];
    for (const [i, fixture] of keys.entries())
      await insertKey(t.db, { ...fixture, createdAt: `2026-11-01T10:00:0${i + 1}Z` });
  });

  it("lists newest first with the lease state judged by the database", async () => {
    const page = await list();
    expect(page.items.map((i) => i.key)).toEqual(["k5", "k4", "k3", "k2", "k1"]);
    expect(Object.fromEntries(page.items.map((i) => [i.key, i.leaseState]))).toEqual({
      k5: "none",
      k4: "live",
      k3: "expired",
      k2: "none",
      k1: "none",
    });
    expect(page.nextCursor).toBeNull();
  });

  it.each([
    [{ status: "COMPLETED" }, ["k5", "k1"]],
    [{ tenant: "globex" }, ["k5", "k2"]],
    [{ procedure: "orders.cancel" }, ["k4"]],
    [{ stuck: true }, ["k3"]],
    [{ tenant: "acme", status: "PROCESSING" }, ["k4", "k3"]],
  ])("filters by %o", async (filter, expected) => {
    expect((await list(filter)).items.map((i) => i.key)).toEqual(expected);
  });

  it("pages with a cursor on (createdAt, id) without gaps or repeats", async () => {
    const seen: string[] = [];
    let cursor: string | null | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await list({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((it) => it.key));
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(["k5", "k4", "k3", "k2", "k1"]);
  });

  it("pages through keys created in the same millisecond by id", async () => {
    for (const key of ["same-a", "same-b", "same-c"])
      await insertKey(t.db, { key, scope: "tie", createdAt: "2026-10-01T00:00:00Z" });
    const first = await list({ tenant: "tie", limit: 2 });
    const second = await list({ tenant: "tie", limit: 2, cursor: first.nextCursor });
    expect([...first.items, ...second.items].map((i) => i.key).sort()).toEqual([
      "same-a",
      "same-b",
      "same-c",
    ]);
    expect(second.nextCursor).toBeNull();
  });

  it("refuses a bad cursor (400), a tenant (403) and a stranger (401)", async () => {
    expect((await query("admin.keys.list", { cursor: "nope" })).status).toBe(400);
    expect((await query("admin.keys.list", {}, TOKENS.acme)).status).toBe(403);
    expect((await query("admin.keys.list", {}, "wrong")).status).toBe(401);
  });

  it("shows a key's detail and, after a bust, its audit trail", async () => {
    const k = await insertKey(t.db, { key: "detail", responseBody: { order: { id: "ord_9" } } });
    const detail = await query("admin.keys.byId", { id: k.id });
    expect(detail.json.result.data.key).toMatchObject({
      key: "detail",
      fingerprint: "f".repeat(64),
      responseStatus: 200,
      responseBody: '{"order":{"id":"ord_9"}}',
      leaseToken: null,
    });
    expect(detail.json.result.data.audit).toEqual([]);
    const bust = await adminCalls(() => t.db).mutate("admin.keys.bust", {
      id: k.id,
      reason: "testing the trail",
    });
    expect(bust.status).toBe(200);
    const after = await query("admin.keys.byId", { id: k.id });
    expect(after.json.result.data.key).toBeNull();
    expect(after.json.result.data.audit).toMatchObject([
      { action: "key.bust", reason: "testing the trail", actor: "admin@example.com" },
    ]);
    const audit = await query("admin.audit.list", {});
    expect(audit.json.result.data.items[0]).toMatchObject({ targetId: k.id, action: "key.bust" });
    expect((await query("admin.keys.byId", { id: randomUUID() })).status).toBe(404);
  });
});

describe("admin.outbox", () => {
  const retry = (id: string, key: string = randomUUID()) =>
    callTrpc(t.db, {
      path: "admin.outbox.retry",
      input: { id, reason: "provider is back up" },
      token: TOKENS.admin,
      key,
      method: "POST",
    });

  it("lists rows by status and sends a dead-lettered one back to PENDING, audited", async () => {
    const dead = await insertOutbox(t.db, { status: "DEAD", attempts: 8 });
    await insertOutbox(t.db, { status: "DELIVERED", attempts: 1 });
    const deadOnly = await query("admin.outbox.list", { status: "DEAD" });
    expect(deadOnly.json.result.data.items.map((m: { id: string }) => m.id)).toEqual([dead.id]);
    const res = await retry(dead.id);
    expect(res.status).toBe(200);
    expect(res.json.result.data).toMatchObject({ status: "PENDING", previousAttempts: 8 });
    expect(await t.db.outboxMessage.findUnique({ where: { id: dead.id } })).toMatchObject({
      status: "PENDING",
      attempts: 0,
      lockedUntil: null,
    });
    const audit = await t.db.auditEntry.findMany({
      where: { targetType: "OutboxMessage", targetId: dead.id },
    });
    expect(audit).toMatchObject([
      {
        action: "outbox.retry",
        reason: "provider is back up",
        actor: "admin@example.com",
        details: { before: { status: "DEAD", attempts: 8 } },
      },
    ]);
  });

  it("refuses a row that is not dead-lettered (412) or unknown (404)", async () => {
    const pending = await insertOutbox(t.db, { status: "PENDING", attempts: 2 });
    const res = await retry(pending.id);
    expect([res.status, res.json.error.data.reason]).toEqual([412, "outbox_message_not_dead"]);
    expect(await t.db.outboxMessage.findUnique({ where: { id: pending.id } })).toMatchObject({
      status: "PENDING",
      attempts: 2,
    });
    expect((await retry(randomUUID())).status).toBe(404);
  });
});

describe("admin.stats", () => {
  it("adds up the flushed counters per tenant and procedure, with live key and outbox counts", async () => {
    const { counters, run } = engineFor(t.db);
    counters.increment("acme", "stats.probe", "executed", 3);
    counters.increment("acme", "stats.probe", "replayed", 2);
    counters.increment("globex", "stats.probe", "conflicts");
    await counters.flush(run);
    counters.increment("acme", "stats.probe", "executed"); // unflushed: stats flushes first
    const res = await query("admin.stats");
    expect(res.status).toBe(200);
    const stats = res.json.result.data;
    const acme = stats.counters.find(
      (c: { tenant: string; procedure: string }) =>
        c.tenant === "acme" && c.procedure === "stats.probe",
    );
    expect(acme.counts).toMatchObject({ executed: 4, replayed: 2, conflicts: 0, busted: 0 });
    expect(stats.totals.conflicts).toBe(1);
    expect(stats.keys.byStatus).toEqual({
      PROCESSING: expect.any(Number),
      COMPLETED: expect.any(Number),
      FAILED: expect.any(Number),
    });
    // k3 is the one stuck lease in this file (the bust tests busted theirs).
    expect(stats.keys.stuck).toBe(1);
    expect(Object.keys(stats.outbox).sort()).toEqual(["DEAD", "DELIVERED", "PENDING"]);
    expect(stats.reaper).toEqual({ lagSeconds: 0, warnAboveSeconds: 300, behind: false });
    expect((await query("admin.stats", undefined, TOKENS.globex)).status).toBe(403);
  });

  it("says the reaper is behind once the oldest key past retention is older than the warning line", async () => {
    const key = randomUUID();
    await t.db
      .$executeRaw`INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "expiresAt")
      VALUES ('acme', ${key}, 'stats.probe', ${"f".repeat(64)}, 'COMPLETED', now() - interval '10 minutes')`;
    const stats = (await query("admin.stats")).json.result.data;
    expect(stats.reaper).toMatchObject({ warnAboveSeconds: 300, behind: true });
    expect(stats.reaper.lagSeconds).toBeGreaterThanOrEqual(600);
    await t.db.idempotencyKey.deleteMany({ where: { key } });
  });
});
