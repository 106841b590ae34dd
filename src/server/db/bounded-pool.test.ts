// A request waits for a connection for the whole wait, in order, however long the queue and however
// slowly connections have been handed out: the pool never refuses early (a refusal after the
// request's work has begun fed a collapse under a crowd: bounded-pool.ts). A wait that runs out is
// busy, with a Retry-After: for a place in the queue, or for a new connection to come up.
import { afterEach, describe, expect, it } from "vitest";
import { classifyStoreFailure, retryAfterOf, StoreFailure } from "@once/idempotency/operator";
import { useTestDatabase } from "@/test/database";
import { stallablePostgres } from "@/test/stallable-postgres";
import { BoundedPool } from "./bounded-pool";
import { RATE_WINDOW } from "../drain-rate";
import { ListenedClient } from "./client";

const t = useTestDatabase();
let pool: BoundedPool | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await pool?.end();
  pool = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function stallable() {
  const forwarder = await stallablePostgres(t.url);
  cleanups.push(() => forwarder.close());
  return forwarder;
}

/**
 * A pool of one connection on a clock the test moves: RATE_WINDOW hand-outs `everyMs` apart, the
 * first at `everyMs`.
 */
async function learntPool(everyMs: number) {
  let now = 0;
  pool = new BoundedPool(
    { connectionString: t.url, max: 1, connectionTimeoutMillis: 2_000, Client: ListenedClient },
    () => now,
  );
  for (let i = 0; i < RATE_WINDOW; i++) {
    now += everyMs;
    await pool.query("SELECT 1");
  }
  return { pool, at: (ms: number) => (now = ms) };
}

describe("BoundedPool", () => {
  it("queues a newcomer for its wait however long the queue is and however slowly it has drained; every request is served", async () => {
    // 4 hand-outs a second: the 2 s wait would drain 8, and 12 are queued behind a held connection.
    const { pool, at } = await learntPool(250);
    const held = await pool.connect();
    at(16_001);
    const queued = Array.from({ length: 12 }, () => pool.query("SELECT 1 AS n"));
    const viaConnect = pool.connect(); // the promise form (Prisma's adapter) waits the same way
    expect(pool.waitingCount).toBe(13);
    held.release();
    expect((await Promise.all(queued)).map((r) => r.rows[0].n)).toEqual(Array(12).fill(1));
    (await viaConnect).release();
  });

  it("reads a new connection that does not come up in time as busy, with a Retry-After, whether or not PostgreSQL answered before", async () => {
    const pg = await stallable();
    const options = {
      connectionString: pg.url,
      max: 3,
      connectionTimeoutMillis: 300,
      Client: ListenedClient,
    };
    pool = new BoundedPool(options);
    const fresh = new BoundedPool(options); // a pool that never reached PostgreSQL
    cleanups.push(() => fresh.end());
    const held = await pool.connect();
    pg.stall();
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (error: unknown) => error,
      );
    // Two requests need new connections (pool.query's callback form, the adapter's promise form),
    // which do not come up; meanwhile PostgreSQL answers on the connection already open, taken and
    // given back again and again as a busy pool's connections are.
    const viaQuery = failure(pool.query("SELECT 1"));
    const viaConnect = failure(pool.connect());
    let settled = false;
    const both = Promise.all([viaQuery, viaConnect]).finally(() => (settled = true));
    let client = held;
    while (!settled) {
      await client.query("SELECT 1");
      client.release();
      client = await pool.connect();
    }
    client.release();
    for (const busy of await both) {
      expect(busy).toMatchObject({ code: "POOL_QUEUE_FULL" });
      expect(classifyStoreFailure(busy)).toBe(StoreFailure.BUSY);
      expect(retryAfterOf(busy)).toBeGreaterThanOrEqual(1);
    }
    // A pool that never reached PostgreSQL cannot tell a slow login from a lost server either:
    // busy (health, probing on its own, says when nothing answers at all).
    const cold = await failure(fresh.query("SELECT 1"));
    expect((cold as Error & { cause: Error }).cause.message).toMatch(/connection timeout/);
    expect(classifyStoreFailure(cold)).toBe(StoreFailure.BUSY);
  });
});
