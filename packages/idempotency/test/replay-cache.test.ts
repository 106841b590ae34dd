// Replay from memory: a finished answer is served without a round trip, under the same rules as a
// stored one, and a bust on one instance reaches every other through LISTEN/NOTIFY, so the next
// retry there runs the handler. Two engines on one database stand for two instances.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { depsOf } from "../src/engine";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createIdempotencyEngine, IdempotencyError, withIdempotency } from "../src/index";
import { useTestDatabase } from "./support/database";
import type { Engine, Tx } from "./support/harness";

const t = useTestDatabase();
let a: Engine;
let b: Engine;

const instance = () =>
  createIdempotencyEngine<Tx>({
    prisma: t.db,
    pool: t.pool,
    listen: () => new pg.Client({ connectionString: t.url }),
  });

beforeAll(async () => {
  a = instance();
  b = instance();
  await Promise.all([a.ready, b.ready]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

let runs = 0;
const call = (engine: Engine, key: string, value = "v") =>
  withIdempotency(
    engine,
    { scope: "acme", key, operation: "effect", request: { value } },
    async (tx) => {
      runs++;
      const row = await tx.testEffect.create({
        data: { scope: "acme", value },
        select: { id: true },
      });
      return { effectId: row.id };
    },
  );

const cacheOf = (engine: Engine) => depsOf(engine).replayCache!;

describe("replay from memory", () => {
  it("answers a retry from memory, byte for byte, without reading the store", async () => {
    const key = randomUUID();
    expect(a.remembers("acme", key)).toBe(false);
    const first = await call(a, key);
    expect(cacheOf(a).has("acme", key)).toBe(true);
    expect(a.remembers("acme", key)).toBe(true);
    // Gone from the table behind the engine's back (no announcement): only memory can answer now.
    await t.db.idempotencyKey.deleteMany({ where: { key } });
    const retry = await call(a, key);
    expect(retry).toMatchObject({ replayed: true, bodyText: first.bodyText, status: 200 });
  });

  it("applies the fingerprint rule from memory: other input under the key is 422", async () => {
    const key = randomUUID();
    await call(a, key, "one");
    const error = await call(a, key, "two").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyError);
    expect((error as IdempotencyError).reason).toBe("idempotency_key_reused");
  });

  it("a bust on one instance makes the next retry on another run the handler", async () => {
    const key = randomUUID();
    await call(a, key);
    expect((await call(b, key)).replayed).toBe(true); // b read it from the store and keeps it
    expect(cacheOf(b).has("acme", key)).toBe(true);
    const id = (
      await t.db.idempotencyKey.findUniqueOrThrow({ where: { scope_key: { scope: "acme", key } } })
    ).id;
    const busted = await t.db.$transaction((tx) => a.removeKey(tx, id, "bust"));
    expect(busted.removed).toBe(true);
    await vi.waitFor(() => expect(b.remembers("acme", key)).toBe(false), {
      timeout: 60_000,
      interval: 10,
    });
    const before = runs;
    const after = await call(b, key);
    expect(after.replayed).toBe(false);
    expect(runs).toBe(before + 1);
  });

  it("caughtUp() resolves only once the instance has heard what was announced before it (a bust on another instance, checked at once with no wait)", async () => {
    for (let round = 0; round < 20; round++) {
      const key = randomUUID();
      await call(a, key);
      expect((await call(b, key)).replayed).toBe(true);
      expect(cacheOf(b).has("acme", key)).toBe(true);
      const id = (
        await t.db.idempotencyKey.findUniqueOrThrow({
          where: { scope_key: { scope: "acme", key } },
        })
      ).id;
      await t.db.$transaction((tx) => a.removeKey(tx, id, "bust")); // b hears of it by NOTIFY
      await b.caughtUp();
      expect(cacheOf(b).has("acme", key)).toBe(false);
    }
  });

  it("caughtUp() resolves at once on an engine without a listener", async () => {
    const quiet = createIdempotencyEngine<Tx>({ prisma: t.db, pool: t.pool });
    await expect(quiet.caughtUp()).resolves.toBeUndefined();
    await quiet.close();
  });

  it("stops serving from memory while its listener is cut off, and resumes once it reconnects", async () => {
    const key = randomUUID();
    await call(b, key);
    const listeners = await t.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    expect(listeners.rows.length).toBeGreaterThanOrEqual(2);
    await t.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    await vi.waitFor(() => expect(cacheOf(b).serving).toBe(false), {
      timeout: 60_000,
      interval: 10,
    });
    expect(cacheOf(b).size).toBe(0); // an eviction may have been missed: nothing is trusted
    await vi.waitFor(() => expect(cacheOf(b).serving).toBe(true), {
      timeout: 60_000,
      interval: 20,
    });
    expect((await call(b, key)).replayed).toBe(true); // from the store again
  });
});
