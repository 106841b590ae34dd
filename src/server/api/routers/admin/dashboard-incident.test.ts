// Issue 11, the dashboard for an incident, part two: the bulk release of stuck leases, the audit
// log's filters, a key's timeline, counters per minute. Through the real tRPC HTTP handler, against
// a real database; every action's stored result is read back.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { adminCalls, callTrpc, TOKENS } from "@/test/http";
import { insertKey, whileTakenOver } from "../../../../test/admin-factory";

const t = useTestDatabase();

const { query, mutate } = adminCalls(() => t.db);

/** n stuck keys for `scope`, in one statement: "<prefix>-1" … "<prefix>-n". */
async function insertStuck(
  scope: string,
  prefix: string,
  n: number,
  procedure = "checkout.placeOrder",
) {
  await t.db.$executeRaw`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT ${scope}, ${prefix} || '-' || i, ${procedure}, repeat('0', 64), 'PROCESSING', gen_random_uuid(), now() - interval '3 minutes', now() + interval '1 day'
    FROM generate_series(1, ${n}::int) AS i`;
}

describe("admin.keys.releaseStuck: the stuck leases a filter selects", () => {
  const releaseAll = (input: Record<string, unknown>, key?: string) =>
    mutate("admin.keys.releaseStuck", { reason: "instance b7 died", ...input }, key);
  const stuckLeft = async (scope: string) =>
    (
      await t.db.$queryRaw<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM "IdempotencyKey" WHERE "scope" = ${scope} AND "status" = 'PROCESSING' AND "leaseExpiresAt" <= now()`
    )[0]!.n;

  it("releases in bounded batches, audits each key with the one reason, and leaves live and finished keys", async () => {
    await insertStuck("bulk", "dead", 505);
    await insertStuck("bulk", "other-proc", 3, "orders.cancel");
    const live = await insertKey(t.db, {
      scope: "bulk",
      key: "live",
      status: "PROCESSING",
      leaseSeconds: 120,
    });
    const done = await insertKey(t.db, { scope: "bulk", key: "done", status: "COMPLETED" });
    const first = await releaseAll({ tenant: "bulk", procedure: "checkout." });
    expect(first.status).toBe(200);
    expect(first.json.result.data).toMatchObject({ released: 500, remaining: 5 });
    const second = await releaseAll({ tenant: "bulk", procedure: "checkout." });
    expect(second.json.result.data).toMatchObject({ released: 5, remaining: 0 });
    expect(await stuckLeft("bulk")).toBe(3); // orders.cancel: outside the filter
    expect(await t.db.idempotencyKey.count({ where: { id: { in: [live.id, done.id] } } })).toBe(2);
    const audit = await t.db.auditEntry.findMany({
      where: { targetScope: "bulk", action: "key.release" },
    });
    expect(audit).toHaveLength(505);
    expect(new Set(audit.map((a) => a.targetKey)).size).toBe(505);
    expect(
      audit.every((a) => a.reason === "instance b7 died" && a.actor === "admin@example.com"),
    ).toBe(true);
    const one = audit.find((a) => a.targetKey === "dead-7")!;
    expect(one.details).toMatchObject({
      tenant: "bulk",
      key: "dead-7",
      procedure: "checkout.placeOrder",
      status: "PROCESSING",
      leaseState: "expired",
      attempts: 1,
    });
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
    const taken = await t.db.idempotencyKey.findFirstOrThrow({
      where: { scope: "bulk-race", key: "r-1" },
    });
    await whileTakenOver(t.url, taken.id, async () => {
      const res = await releaseAll({ tenant: "bulk-race" });
      expect(res.json.result.data).toMatchObject({ released: 1 });
    });
    expect(await t.db.idempotencyKey.findUnique({ where: { id: taken.id } })).toMatchObject({
      status: "PROCESSING",
      attempts: 2,
    });
    expect(await t.db.auditEntry.count({ where: { targetId: taken.id } })).toBe(0);
  });

  it("needs a reason and an Idempotency-Key", async () => {
    expect((await releaseAll({ tenant: "x", reason: "" })).status).toBe(400);
    const noKey = await callTrpc(t.db, {
      path: "admin.keys.releaseStuck",
      input: { reason: "because" },
      token: TOKENS.admin,
      method: "POST",
    });
    expect(noKey.json.error.data.reason).toBe("idempotency_key_missing");
  });
});

describe("admin.audit.list filters", () => {
  it("filters by actor, action and key value, and names the key by value", async () => {
    const a = await insertKey(t.db, { scope: "audit-f", key: "audited-a", status: "COMPLETED" });
    const b = await insertKey(t.db, {
      scope: "audit-f",
      key: "audited-b",
      status: "PROCESSING",
      leaseSeconds: -60,
    });
    expect((await mutate("admin.keys.bust", { id: a.id, reason: "filter test a" })).status).toBe(
      200,
    );
    expect((await mutate("admin.keys.release", { id: b.id, reason: "filter test b" })).status).toBe(
      200,
    );
    await t.db.auditEntry.create({
      data: {
        actor: "someone@else.example",
        action: "key.bust",
        targetType: "IdempotencyKey",
        targetId: randomUUID(),
        targetScope: "audit-f",
        targetKey: "audited-c",
        reason: "by another",
      },
    });
    const list = async (input: Record<string, unknown>) =>
      (await query("admin.audit.list", { tenant: "audit-f", ...input })).items as {
        targetKey: string;
        action: string;
      }[];
    expect((await list({ key: "audited-a" })).map((e) => [e.targetKey, e.action])).toEqual([
      ["audited-a", "key.bust"],
    ]);
    expect((await list({ action: "key.release" })).map((e) => e.targetKey)).toEqual(["audited-b"]);
    expect((await list({ actor: "someone@else.example" })).map((e) => e.targetKey)).toEqual([
      "audited-c",
    ]);
    expect(
      (await list({ actor: "admin@example.com", action: "key.bust" })).map((e) => e.targetKey),
    ).toEqual(["audited-a"]);
  });
});

describe("admin.keys.byId: the timeline", () => {
  it("tells a value's rows apart: reserved, completed, busted (who, why), reserved again, taken over, stuck", async () => {
    const first = await insertKey(t.db, {
      scope: "tl",
      key: "tl-1",
      status: "COMPLETED",
      createdAt: "2026-11-01T10:00:00Z",
    });
    expect(
      (await mutate("admin.keys.bust", { id: first.id, reason: "customer asked" })).status,
    ).toBe(200);
    // The history as it happened, at literal times: the bust at 11:00, the value used again at
    // 12:00, taken over twice (the last time 30 s before its lease ended two minutes ago).
    await t.db.auditEntry.updateMany({
      where: { targetId: first.id },
      data: { createdAt: new Date("2026-11-01T11:00:00Z") },
    });
    const second = await insertKey(t.db, {
      scope: "tl",
      key: "tl-1",
      status: "PROCESSING",
      leaseSeconds: -120,
      attempts: 3,
      createdAt: "2026-11-01T12:00:00Z",
    });
    await t.db
      .$executeRaw`UPDATE "IdempotencyKey" SET "updatedAt" = "leaseExpiresAt" - interval '30 seconds' WHERE "id" = ${second.id}::uuid`;
    const { timeline, audit } = await query("admin.keys.byId", { id: second.id });
    // The audit trail below the timeline names the same bust: the page never says both "busted"
    // and "no manual actions on this key".
    expect(audit.map((a: { action: string; reason: string }) => `${a.action}:${a.reason}`)).toEqual(
      ["key.bust:customer asked"],
    );
    expect(
      timeline.map(
        (e: { kind: string; rowId: string }) => `${e.kind}:${e.rowId === first.id ? 1 : 2}`,
      ),
    ).toEqual(["reserved:1", "completed:1", "busted:1", "reserved:2", "taken_over:2", "lease:2"]);
    const busted = timeline.find((e: { kind: string }) => e.kind === "busted");
    expect(busted).toMatchObject({ actor: "admin@example.com", reason: "customer asked" });
    expect(timeline.find((e: { kind: string }) => e.kind === "lease").text).toMatch(
      /^expired 2 min ago \(stuck\)$/,
    );
    expect(timeline.find((e: { kind: string }) => e.kind === "taken_over").text).toMatch(
      /taken over 2 times/,
    );
  });
});

describe("admin.counters.series", () => {
  it("counts per minute for the last 24 h, zeros where nothing was counted, per tenant and one or every procedure", async () => {
    const now = (await t.db.$queryRaw<{ m: Date }[]>`SELECT date_trunc('minute', now()) AS m`)[0]!
      .m;
    const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
    await t.db.idempotencyCounterMinute.createMany({
      data: [
        {
          scope: "series",
          procedure: "checkout.placeOrder",
          event: "executed",
          minute: at(0),
          count: 5n,
        },
        {
          scope: "series",
          procedure: "checkout.placeOrder",
          event: "executed",
          minute: at(10),
          count: 2n,
        },
        {
          scope: "series",
          procedure: "checkout.placeOrder",
          event: "conflicts",
          minute: at(10),
          count: 1n,
        },
        {
          scope: "series",
          procedure: "checkout.placeOrder",
          event: "executed",
          minute: at(24 * 60 + 5),
          count: 99n,
        }, // too old
        {
          scope: "series",
          procedure: "orders.cancel",
          event: "executed",
          minute: at(0),
          count: 7n,
        },
        {
          scope: "series-other",
          procedure: "checkout.placeOrder",
          event: "store_errors",
          minute: at(3),
          count: 4n,
        },
      ],
    });
    const s = await query("admin.counters.series", {
      tenant: "series",
      procedure: "checkout.placeOrder",
    });
    expect(s.minutes).toBe(1440);
    expect(s.series.executed).toHaveLength(1440);
    expect(s.series.executed[1439]).toBe(5);
    expect(s.series.executed[1429]).toBe(2);
    expect(s.series.conflicts[1429]).toBe(1);
    expect(s.totals).toEqual({
      executed: 7,
      replayed: 0,
      conflicts: 1,
      mismatches: 0,
      store_errors: 0,
    });
    expect(new Date(s.from).getTime()).toBe(at(1439).getTime());
    const tenant = await query("admin.counters.series", { tenant: "series" });
    expect(tenant.totals).toMatchObject({ executed: 14, store_errors: 0 });
    expect(tenant.series.executed[1439]).toBe(12);
    expect(
      (
        await callTrpc(t.db, {
          path: "admin.counters.series",
          input: {},
          token: TOKENS.admin,
          method: "GET",
        })
      ).status,
    ).toBe(400);
  });
});
