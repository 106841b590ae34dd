// Overload is refused at once, not after the whole wait: a pool that has learnt its drain rate
// refuses a newcomer whose queue it could not drain within the wait, busy (503 store_busy) with a
// Retry-After from that rate; what is already queued is still served, in order.
import { afterEach, describe, expect, it } from "vitest";
import { classifyStoreFailure, retryAfterOf, StoreFailure } from "@once/idempotency/operator";
import { useTestDatabase } from "@/test/database";
import { BoundedPool, RATE_WINDOW } from "./bounded-pool";
import { ListenedClient } from "./client";

const t = useTestDatabase();
let pool: BoundedPool | undefined;
afterEach(async () => {
  await pool?.end();
  pool = undefined;
});

/** A pool of one connection on a clock the test moves: RATE_WINDOW hand-outs, the first at 1 ms. */
async function learntPool() {
  let now = 0;
  pool = new BoundedPool(
    { connectionString: t.url, max: 1, connectionTimeoutMillis: 2_000, Client: ListenedClient },
    () => now,
  );
  for (let i = 0; i < RATE_WINDOW; i++) {
    now++;
    await pool.query("SELECT 1");
  }
  return { pool, at: (ms: number) => (now = ms) };
}

describe("BoundedPool", () => {
  it("refuses at once, busy with a Retry-After, a newcomer that could not be served within the wait; the queue is still served", async () => {
    const { pool, at } = await learntPool();
    const held = await pool.connect();
    // 16 s after the window's first hand-out: 4 a second, so the 2 s wait drains 8 requests.
    at(16_001);
    const queued = Array.from({ length: 8 }, () => pool.query("SELECT 1 AS n"));
    expect(pool.waitingCount).toBe(8);
    const started = performance.now();
    const refused = await pool.query("SELECT 1").then(
      () => null,
      (error: unknown) => error,
    );
    expect(performance.now() - started).toBeLessThan(50);
    expect(refused).toMatchObject({ code: "POOL_QUEUE_FULL" });
    expect(classifyStoreFailure(refused)).toBe(StoreFailure.BUSY);
    expect(retryAfterOf(refused)).toBe(3); // 9 requests at 4 a second: 2.25 s
    // The promise form (Prisma's adapter) is refused the same way.
    await expect(pool.connect()).rejects.toMatchObject({ code: "POOL_QUEUE_FULL" });
    held.release();
    expect((await Promise.all(queued)).map((r) => r.rows[0].n)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it("queues as pg-pool does while it has no rate yet", async () => {
    pool = new BoundedPool(
      { connectionString: t.url, max: 1, connectionTimeoutMillis: 2_000, Client: ListenedClient },
      () => 0,
    );
    const held = await pool.connect();
    const queued = Array.from({ length: 20 }, () => pool!.query("SELECT 1"));
    expect(pool.waitingCount).toBe(20);
    held.release();
    expect(await Promise.all(queued)).toHaveLength(20);
  });
});
