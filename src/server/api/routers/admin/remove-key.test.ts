// admin.keys.bust and admin.keys.release through the real HTTP handler, against a real database.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";
import { engineFor } from "@/test/app";
import { withIdempotency } from "@once/idempotency";
import { insertKey, whileTakenOver } from "../../../../test/admin-factory";

const t = useTestDatabase();

const bust = (
  id: string,
  reason = "customer asked to re-run the order",
  key: string = randomUUID(),
  token: string = TOKENS.admin,
) => callTrpc(t.db, { path: "admin.keys.bust", input: { id, reason }, token, key, method: "POST" });
const release = (id: string, reason = "worker crashed mid-request", key: string = randomUUID()) =>
  callTrpc(t.db, {
    path: "admin.keys.release",
    input: { id, reason },
    token: TOKENS.admin,
    key,
    method: "POST",
  });

const row = (id: string) => t.db.idempotencyKey.findUnique({ where: { id } });
const auditOf = (id: string) =>
  t.db.auditEntry.findMany({ where: { targetType: "IdempotencyKey", targetId: id } });
const pendingCount = (scope: string, event: string) =>
  engineFor(t.db)
    .counters.snapshot()
    .filter((c) => c.scope === scope && c.event === event)
    .reduce((s, c) => s + c.count, 0);

describe("admin.keys.bust", () => {
  it("removes a COMPLETED key, audits who/why/what was stored, and counts it", async () => {
    const k = await insertKey(t.db, {
      status: "COMPLETED",
      responseBody: { order: { id: "ord_1" } },
      scope: "globex",
    });
    const before = pendingCount("globex", "busted");
    const res = await bust(k.id, "refund issued by hand; let the client retry");
    expect(res.status).toBe(200);
    expect(res.json.result.data).toMatchObject({
      action: "bust",
      key: { id: k.id, tenant: "globex", status: "COMPLETED" },
    });
    expect(await row(k.id)).toBeNull();
    const [entry, ...more] = await auditOf(k.id);
    expect(more).toHaveLength(0);
    expect(entry).toMatchObject({
      actor: "admin@example.com",
      action: "key.bust",
      reason: "refund issued by hand; let the client retry",
      details: {
        tenant: "globex",
        key: k.key,
        status: "COMPLETED",
        responseStatus: 200,
        responseBody: '{"order":{"id":"ord_1"}}',
      },
    });
    expect(entry!.id).toBe(res.json.result.data.auditId);
    expect(pendingCount("globex", "busted")).toBe(before + 1);
  });

  it("removes a FAILED key", async () => {
    const k = await insertKey(t.db, {
      status: "FAILED",
      responseStatus: 412,
      responseBody: { code: "PRECONDITION_FAILED" },
    });
    expect((await bust(k.id)).status).toBe(200);
    expect(await row(k.id)).toBeNull();
  });

  it("removes a PROCESSING key whose lease has expired (stuck)", async () => {
    const k = await insertKey(t.db, { status: "PROCESSING", leaseSeconds: -5 });
    const res = await bust(k.id);
    expect(res.status).toBe(200);
    expect(await row(k.id)).toBeNull();
    expect((await auditOf(k.id))[0]?.details).toMatchObject({
      status: "PROCESSING",
      leaseState: "expired",
    });
  });

  it("refuses a PROCESSING key whose lease is live, and leaves it and the audit log alone", async () => {
    const k = await insertKey(t.db, { status: "PROCESSING", leaseSeconds: 60 });
    const res = await bust(k.id);
    expect(res.status).toBe(412);
    expect(res.json.error.data.reason).toBe("key_lease_live");
    expect(res.json.error.message).toMatch(/lease is live/);
    expect(await row(k.id)).toMatchObject({ status: "PROCESSING" });
    expect(await auditOf(k.id)).toHaveLength(0);
  });

  it("answers 404 key_not_found for an unknown key", async () => {
    const res = await bust(randomUUID());
    expect(res.status).toBe(404);
    expect(res.json.error.data.reason).toBe("key_not_found");
  });

  it("with the key's tenant, removes it; with another tenant's, answers 404 and leaves it", async () => {
    const k = await insertKey(t.db, { status: "COMPLETED", scope: "globex" });
    const reason = "the tenant names where to look";
    const send = (tenant: string) =>
      callTrpc(t.db, {
        path: "admin.keys.bust",
        input: { id: k.id, tenant, reason },
        token: TOKENS.admin,
        key: randomUUID(),
        method: "POST",
      });
    const elsewhere = await send("acme");
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.json.error.data.reason).toBe("key_not_found");
    expect(await row(k.id)).not.toBeNull();
    expect((await send("globex")).status).toBe(200);
    expect(await row(k.id)).toBeNull();
  });

  it("never removes a key that went live while the bust waited for it (re-checked in the same statement)", async () => {
    const k = await insertKey(t.db, { status: "PROCESSING", leaseSeconds: -5 });
    // Another request takes the stuck key over, and has not committed yet.
    const { pending } = await whileTakenOver(t.url, k.id, async (other) => {
      const pending = bust(k.id);
      // Wait until the bust's DELETE waits for that row lock (the only lock wait in this database),
      // then let the takeover commit.
      await expect
        .poll(
          async () => {
            const r = await other.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
            );
            return r.rows[0].n;
          },
          { timeout: 10_000, interval: 20 },
        )
        .toBe(1);
      return { pending };
    });
    const res = await pending;
    expect(res.status).toBe(412);
    expect(res.json.error.data.reason).toBe("key_lease_live");
    expect(await row(k.id)).toMatchObject({ status: "PROCESSING", attempts: 2 });
  });

  it("lets the next request with the busted key execute anew", async () => {
    let runs = 0;
    const call = () =>
      withIdempotency(
        engineFor(t.db),
        {
          scope: "acme",
          key: "order-intent-42",
          operation: "test.placeOrder",
          request: { sku: "MUG-001" },
        },
        async () => ({
          run: ++runs,
        }),
      );
    expect(await call()).toMatchObject({ ok: true, replayed: false, body: { run: 1 } });
    expect(await call()).toMatchObject({ ok: true, replayed: true, body: { run: 1 } });
    const stored = await t.db.idempotencyKey.findUniqueOrThrow({
      where: { scope_key: { scope: "acme", key: "order-intent-42" } },
    });
    expect((await bust(stored.id)).status).toBe(200);
    expect(await call()).toMatchObject({ ok: true, replayed: false, body: { run: 2 } });
  });

  it("is idempotent itself: the same admin key replays the first answer and busts once", async () => {
    const k = await insertKey(t.db);
    const adminKey = randomUUID();
    const first = await bust(k.id, "duplicate request", adminKey);
    const again = await bust(k.id, "duplicate request", adminKey);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await auditOf(k.id)).toHaveLength(1);
  });

  it("needs an Idempotency-Key, a reason, and an admin", async () => {
    const k = await insertKey(t.db);
    const noKey = await callTrpc(t.db, {
      path: "admin.keys.bust",
      input: { id: k.id, reason: "because" },
      token: TOKENS.admin,
      method: "POST",
    });
    expect(noKey.status).toBe(400);
    expect(noKey.json.error.data.reason).toBe("idempotency_key_missing");
    expect((await bust(k.id, "")).status).toBe(400);
    expect((await bust(k.id, "tenant tries", randomUUID(), TOKENS.acme)).status).toBe(403);
    const anonymous = await callTrpc(t.db, {
      path: "admin.keys.bust",
      input: { id: k.id, reason: "because" },
      key: randomUUID(),
      method: "POST",
    });
    expect(anonymous.status).toBe(401);
    expect(await row(k.id)).not.toBeNull();
  });
});

describe("admin.keys.release", () => {
  it("releases a stuck lease, audited and counted as released", async () => {
    const k = await insertKey(t.db, {
      status: "PROCESSING",
      leaseSeconds: -1,
      scope: "acme",
      procedure: "checkout.placeOrder",
    });
    const res = await release(k.id);
    expect(res.status).toBe(200);
    expect(res.json.result.data).toMatchObject({ action: "release" });
    expect(await row(k.id)).toBeNull();
    expect((await auditOf(k.id))[0]).toMatchObject({
      action: "key.release",
      reason: "worker crashed mid-request",
      actor: "admin@example.com",
    });
  });

  it("refuses a live lease (key_lease_live) and a finished key (key_not_stuck)", async () => {
    const live = await insertKey(t.db, { status: "PROCESSING", leaseSeconds: 60 });
    const done = await insertKey(t.db, { status: "COMPLETED" });
    const a = await release(live.id);
    const b = await release(done.id);
    expect([a.status, a.json.error.data.reason]).toEqual([412, "key_lease_live"]);
    expect([b.status, b.json.error.data.reason]).toEqual([412, "key_not_stuck"]);
    expect(await row(live.id)).not.toBeNull();
    expect(await row(done.id)).not.toBeNull();
    expect(await auditOf(live.id)).toHaveLength(0);
  });
});
