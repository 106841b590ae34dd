// The protocol of docs/design.md, one describe per rule, each run through both entry points (the
// tRPC middleware and the plain wrapper) against a real PostgreSQL. Failure tests also check what
// was stored. Concurrency is real (Promise.all over a connection pool), and waits are on gates and
// conditions, never on sleeps.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useTestDatabase } from "./support/database";
import {
  configure,
  ENTRY_POINTS,
  effectsFor,
  executions,
  Gate,
  keyRow,
  parkNextExecution,
  reasonOf,
  serveTestTrpc,
  trpcEntry,
} from "./support/harness";

const t = useTestDatabase({ poolMax: 10 });

afterEach(() => {
  configure(t.db); // back to the defaults after a test that changed the configuration
});

const fresh = (label: string) => `${label}-${randomUUID()}`;

describe.each(ENTRY_POINTS)("through the $name", (entry) => {
  describe("1. the key", () => {
    it.each([
      [undefined, "idempotency_key_missing"],
      ["", "idempotency_key_missing"],
      ["has spaces", "idempotency_key_invalid"],
      ["x".repeat(256), "idempotency_key_invalid"],
    ])("refuses key %j with 400 %s and records nothing", async (key, reason) => {
      const value = fresh("nokey");
      const answer = await entry.call(t.db, { key, input: { value } });
      expect(answer.status).toBe(400);
      expect(reasonOf(answer)).toBe(reason);
      expect(await effectsFor(t.db, value)).toBe(0);
      expect(await t.db.idempotencyKey.count({ where: { key: key ?? "" } })).toBe(0);
    });

    it("accepts the RFC 8941 quoted form as the same key as the bare one", async () => {
      const key = fresh("quoted");
      const value = fresh("v");
      const first = await entry.call(t.db, { key: `"${key}"`, input: { value } });
      const second = await entry.call(t.db, { key, input: { value } });
      expect(first.status).toBe(200);
      expect(second).toMatchObject({ status: 200, replayed: true, body: first.body });
      expect(await effectsFor(t.db, value)).toBe(1);
    });
  });

  describe("2. the fingerprint", () => {
    it("replays a retry whose input has its keys in another order", async () => {
      const key = fresh("order");
      const value = fresh("v");
      const first = await entry.call(t.db, {
        key,
        input: { value, extra: { a: 1, b: { c: 2, d: 3 } } },
      });
      const retry = await entry.call(t.db, {
        key,
        input: { extra: { b: { d: 3, c: 2 }, a: 1 }, value },
      });
      expect(first).toMatchObject({ status: 200, replayed: false });
      expect(retry).toMatchObject({ status: 200, replayed: true, body: first.body });
      expect(await effectsFor(t.db, value)).toBe(1);
    });

    it("answers 422 to the same key with a different input, and keeps the first record", async () => {
      const key = fresh("reuse");
      const value = fresh("v");
      const first = await entry.call(t.db, { key, input: { value } });
      const other = await entry.call(t.db, { key, input: { value: `${value}-other` } });
      expect(other.status).toBe(422);
      expect(reasonOf(other)).toBe("idempotency_key_reused");
      expect(await effectsFor(t.db, `${value}-other`)).toBe(0);
      const row = await keyRow(t.db, "acme", key);
      expect(row).toMatchObject({ status: "COMPLETED" });
      expect(JSON.parse(row!.responseBody!)).toEqual(first.body);
    });

    it("keeps tenants apart: acme and globex with one key value execute independently", async () => {
      const key = fresh("shared");
      const value = fresh("v");
      const [acme, globex] = await Promise.all([
        entry.call(t.db, { token: "acme_token", key, input: { value } }),
        entry.call(t.db, { token: "globex_token", key, input: { value } }),
      ]);
      expect(acme).toMatchObject({ status: 200, replayed: false });
      expect(globex).toMatchObject({ status: 200, replayed: false });
      expect(acme.body.effectId).not.toBe(globex.body.effectId);
      expect(await effectsFor(t.db, value)).toBe(2);
    });
  });

  describe("3. reservation decides every race", () => {
    it("runs 32 concurrent identical requests on a new key exactly once; the rest replay or get 409", async () => {
      const key = fresh("burst");
      const value = fresh("v");
      const answers = await Promise.all(
        Array.from({ length: 32 }, () => entry.call(t.db, { key, input: { value } })),
      );
      expect(await effectsFor(t.db, value)).toBe(1);
      const executed = answers.filter((a) => a.status === 200 && !a.replayed);
      const replayed = answers.filter((a) => a.status === 200 && a.replayed);
      const conflicts = answers.filter((a) => a.status === 409);
      expect(executed).toHaveLength(1);
      expect(replayed.length + conflicts.length).toBe(31);
      for (const r of replayed) expect(r.body).toEqual(executed[0]!.body);
      for (const c of conflicts) {
        expect(reasonOf(c)).toBe("request_in_progress");
        expect(Number(c.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    });

    it("answers 409 with Retry-After while the first request is still running, then replays", async () => {
      const key = fresh("inflight");
      const value = fresh("v");
      const gate = new Gate();
      parkNextExecution(gate);
      const first = entry.call(t.db, { key, input: { value } });
      await gate.reached;
      const during = await entry.call(t.db, { key, input: { value } });
      expect(during.status).toBe(409);
      expect(reasonOf(during)).toBe("request_in_progress");
      expect(Number(during.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      gate.open();
      expect((await first).status).toBe(200);
      const after = await entry.call(t.db, { key, input: { value } });
      expect(after).toMatchObject({ status: 200, replayed: true });
    });
  });

  describe("4. leases expire, are taken over once, and fence the late completion", () => {
    it("lets a retry take over a stalled request; the stalled one is fenced out and rolls back", async () => {
      configure(t.db, { leaseMs: 300 });
      const key = fresh("stall");
      const value = fresh("v");
      const gate = new Gate();
      parkNextExecution(gate);
      const stalled = entry.call(t.db, { key, input: { value } });
      await gate.reached; // its business write is done, uncommitted, and it holds the lease
      await vi.waitFor(
        async () => {
          const [row] = await t.db.$queryRaw<{ expired: boolean }[]>`
            SELECT "leaseExpiresAt" <= now() AS "expired" FROM "IdempotencyKey" WHERE "scope" = 'acme' AND "key" = ${key}`;
          expect(row?.expired).toBe(true);
        },
        { timeout: 60_000, interval: 50 },
      );
      const retry = await entry.call(t.db, { key, input: { value } });
      expect(retry).toMatchObject({ status: 200, replayed: false });
      gate.open();
      const late = await stalled;
      expect(late.status).toBe(409);
      expect(await effectsFor(t.db, value)).toBe(1);
      const row = await keyRow(t.db, "acme", key);
      expect(row).toMatchObject({ status: "COMPLETED", attempts: 2 });
      expect(JSON.parse(row!.responseBody!)).toEqual(retry.body);
      const replay = await entry.call(t.db, { key, input: { value } });
      expect(replay).toMatchObject({ status: 200, replayed: true, body: retry.body });
    });

    it("lets exactly one of many concurrent retries take over an expired lease", async () => {
      const key = fresh("takeover");
      const value = fresh("v");
      // A request that died holding its lease: PROCESSING, lease expired a minute ago.
      await t.db.$executeRaw`
        INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
        VALUES ('acme', ${key}, 'effect', ${entry.fingerprint({ value })}, 'PROCESSING', gen_random_uuid(),
                now() - interval '1 minute', now() + interval '1 day')`;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => entry.call(t.db, { key, input: { value } })),
      );
      expect(await effectsFor(t.db, value)).toBe(1);
      expect(answers.filter((a) => a.status === 200 && !a.replayed)).toHaveLength(1);
      expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
      expect(await keyRow(t.db, "acme", key)).toMatchObject({ status: "COMPLETED", attempts: 2 });
    });
  });

  describe("5. errors: deterministic ones are stored and replayed, transient ones release the key", () => {
    it("stores a deterministic 4xx, rolls the business write back, and replays it", async () => {
      const key = fresh("det");
      const value = fresh("v");
      const first = await entry.call(t.db, { key, input: { value, mode: "deterministic" } });
      expect(first.status).toBe(412);
      expect(reasonOf(first)).toBe("out_of_stock");
      const retry = await entry.call(t.db, { key, input: { value, mode: "deterministic" } });
      expect(retry).toMatchObject({ status: 412, replayed: true, body: first.body });
      expect(await effectsFor(t.db, value)).toBe(0);
      expect(await keyRow(t.db, "acme", key)).toMatchObject({
        status: "FAILED",
        responseStatus: 412,
        leaseToken: null,
      });
    });

    it("releases the key after a 5xx, so the retry executes anew", async () => {
      const key = fresh("transient");
      const value = fresh("v");
      const first = await entry.call(t.db, { key, input: { value, mode: "transient" } });
      expect(first.status).toBe(500);
      expect(await keyRow(t.db, "acme", key)).toBeNull();
      expect(await effectsFor(t.db, value)).toBe(0);
      const retry = await entry.call(t.db, { key, input: { value } });
      expect(retry).toMatchObject({ status: 200, replayed: false });
      expect(await effectsFor(t.db, value)).toBe(1);
    });
  });

  describe("7. retention", () => {
    it("announces when the key expires (Idempotency-Key-Expires, an HTTP date)", async () => {
      configure(t.db, { ttlSeconds: 3600 });
      const before = Date.now();
      const answer = await entry.call(t.db, { key: fresh("ttl"), input: { value: fresh("v") } });
      const expires = Date.parse(answer.headers.get("idempotency-key-expires")!);
      expect(answer.headers.get("idempotency-key-expires")).toMatch(/GMT$/);
      expect(expires).toBeGreaterThan(before + 3_590_000);
      expect(expires).toBeLessThan(Date.now() + 3_610_000);
    });

    it("treats a key past its retention as absent: the request runs anew", async () => {
      const key = fresh("expired");
      const value = fresh("v");
      await entry.call(t.db, { key, input: { value } });
      await t.db
        .$executeRaw`UPDATE "IdempotencyKey" SET "expiresAt" = now() - interval '1 second' WHERE "scope" = 'acme' AND "key" = ${key}`;
      const again = await entry.call(t.db, { key, input: { value } });
      expect(again).toMatchObject({ status: 200, replayed: false });
      expect(await effectsFor(t.db, value)).toBe(2);
      const row = await keyRow(t.db, "acme", key);
      expect(row!.expiresAt.getTime()).toBeGreaterThan(Date.now());
    });
  });

  describe("8. the live-key cap", () => {
    it("answers 429 for a new key past the cap, and still replays keys the tenant holds", async () => {
      const live = await t.db.idempotencyKey.count({
        where: { scope: "globex", expiresAt: { gt: new Date() } },
      });
      configure(t.db, { liveKeyCountTtlMs: 0, maxLiveKeys: live + 1 });
      // acme holds more than that: the cap counts per tenant, so globex is not refused for it.
      await t.db.$executeRaw`
        INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "expiresAt")
        SELECT 'acme', ${fresh("filler")} || g, 'effect', repeat('0', 64), 'COMPLETED', now() + interval '1 hour'
        FROM generate_series(1, ${live + 2}) AS g`;
      const held = fresh("held");
      const value = fresh("v");
      expect(
        (await entry.call(t.db, { token: "globex_token", key: held, input: { value } })).status,
      ).toBe(200);
      const refused = await entry.call(t.db, {
        token: "globex_token",
        key: fresh("new"),
        input: { value: fresh("v") },
      });
      expect(refused.status).toBe(429);
      expect(reasonOf(refused)).toBe("too_many_keys");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      const replay = await entry.call(t.db, { token: "globex_token", key: held, input: { value } });
      expect(replay).toMatchObject({ status: 200, replayed: true });
    });
  });
});

describe("the tRPC surface", () => {
  it("refuses an Idempotency-Key on a batch of several mutations with 400", async () => {
    const value = fresh("batch");
    const res = await serveTestTrpc(
      t.db,
      new Request("http://localhost/api/trpc/effect,effect?batch=1", {
        method: "POST",
        headers: {
          authorization: "Bearer acme_token",
          "idempotency-key": fresh("b"),
          "content-type": "application/json",
        },
        body: JSON.stringify({ 0: { value }, 1: { value } }),
      }),
    );
    const json = (await res.json()) as {
      error: { data: { reason: string; httpStatus: number } };
    }[];
    expect(json.map((r) => r.error.data.reason)).toEqual([
      "idempotency_batch_not_allowed",
      "idempotency_batch_not_allowed",
    ]);
    expect(json[0]!.error.data.httpStatus).toBe(400);
    expect(await effectsFor(t.db, value)).toBe(0);
  });

  it("refuses invalid input with 400 before reserving anything", async () => {
    const key = fresh("invalid");
    const before = executions.count;
    const answer = await trpcEntry.call(t.db, { key, input: { value: "" } });
    expect(answer.status).toBe(400);
    expect(answer.body.data.code).toBe("BAD_REQUEST");
    expect(await keyRow(t.db, "acme", key)).toBeNull();
    expect(executions.count).toBe(before);
  });

  it("answers a deterministic failure and its replay with the same status and body", async () => {
    const key = fresh("same-body");
    const value = fresh("v");
    const first = await trpcEntry.call(t.db, { key, input: { value, mode: "deterministic" } });
    const replay = await trpcEntry.call(t.db, { key, input: { value, mode: "deterministic" } });
    expect(first.body).toEqual(replay.body);
    expect(first.body.data).toMatchObject({
      code: "PRECONDITION_FAILED",
      httpStatus: 412,
      reason: "out_of_stock",
    });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("a replay is the first answer byte for byte", () => {
  it.each(ENTRY_POINTS)(
    "success through the $name: same bytes, though the stored input had its keys in another order",
    async (entry) => {
      const key = fresh("bytes");
      const value = fresh("v");
      const first = await entry.call(t.db, {
        key,
        input: { value, extra: { z: 1, a: { y: [1, 2, { b: 1, a: 2 }] } } },
      });
      const replay = await entry.call(t.db, {
        key,
        input: { extra: { a: { y: [1, 2, { a: 2, b: 1 }] }, z: 1 }, value },
      });
      expect(replay.replayed).toBe(true);
      expect(replay.text).toBe(first.text);
      const row = await keyRow(t.db, "acme", key);
      expect(row).toMatchObject({ responseStatus: 200, responseContentType: "application/json" });
      expect(first.text).toContain(row!.responseBody!);
    },
  );

  it.each(ENTRY_POINTS)(
    "stored failure through the $name: same status, same bytes",
    async (entry) => {
      const key = fresh("bytes-failed");
      const value = fresh("v");
      const first = await entry.call(t.db, { key, input: { value, mode: "deterministic" } });
      const replay = await entry.call(t.db, { key, input: { value, mode: "deterministic" } });
      expect(first.status).toBe(412);
      expect(replay).toMatchObject({ status: 412, replayed: true });
      expect(replay.text).toBe(first.text);
    },
  );
});
