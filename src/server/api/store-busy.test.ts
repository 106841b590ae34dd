// Busy is not down, at the app's edge: with the pool's only connection held elsewhere, a query, a
// mutation and the principal's lookup answer 503 store_busy with Retry-After (the database is up),
// counted apart from store_unavailable; once the connection is free, the same calls succeed.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CounterEvent } from "@once/idempotency/operator";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";
import { createDb, type Db } from "../db/client";
import { engineFor, testApp } from "../../test/app";
import { createContextFor } from "./context";
import { createCaller } from "./root";

const t = useTestDatabase();
let pool: pg.Pool;
let busyDb: Db;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: t.url, max: 1, connectionTimeoutMillis: 300 });
  busyDb = createDb(t.url, { pool });
});

afterAll(async () => {
  await busyDb.$disconnect();
  await pool.end();
});

/** Runs `call` while the pool's one connection is checked out by someone else. */
async function whileHeld<T>(call: () => Promise<T>): Promise<T> {
  const held = await pool.connect();
  try {
    return await call();
  } finally {
    held.release();
  }
}

const counted = (event: CounterEvent, scope?: string) =>
  engineFor(busyDb)
    .counters.snapshot()
    .filter((d) => d.event === event && (scope === undefined || d.scope === scope))
    .reduce((n, d) => n + d.count, 0);

describe("a pool with no connection free in time", () => {
  it("a query is 503 store_busy with Retry-After, counted as store_busy, not store_errors", async () => {
    const before = {
      busy: counted(CounterEvent.STORE_BUSY),
      down: counted(CounterEvent.STORE_ERRORS),
    };
    const res = await whileHeld(() => callTrpc(busyDb, { path: "catalog.list", method: "GET" }));
    expect(res.status).toBe(503);
    expect(res.json.error.data.reason).toBe("store_busy");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("link")).toContain("/docs/errors#store_busy");
    expect(counted(CounterEvent.STORE_BUSY)).toBe(before.busy + 1);
    expect(counted(CounterEvent.STORE_ERRORS)).toBe(before.down);
    expect((await callTrpc(busyDb, { path: "catalog.list", method: "GET" })).status).toBe(200);
  });

  it("the principal's lookup and a mutation are 503 store_busy; nothing is recorded, and the same key runs afterwards", async () => {
    const stats = await whileHeld(() =>
      callTrpc(busyDb, { path: "admin.stats", token: TOKENS.admin, method: "GET" }),
    );
    expect(stats.status).toBe(503);
    expect(stats.json.error.data.reason).toBe("store_busy");

    const [product] = await t.db.product.findMany({ take: 1, select: { id: true } });
    const input = { items: [{ productId: product!.id, quantity: 1 }] };
    const key = crypto.randomUUID();
    const order = await whileHeld(() =>
      callTrpc(busyDb, { path: "checkout.placeOrder", token: TOKENS.acme, key, input }),
    );
    expect(order.status).toBe(503);
    expect(order.json.error.data.reason).toBe("store_busy");
    expect(await t.db.idempotencyKey.count({ where: { key } })).toBe(0);
    expect(
      (await callTrpc(busyDb, { path: "checkout.placeOrder", token: TOKENS.acme, key, input }))
        .status,
    ).toBe(200);
  });

  it('a query that is busy after the caller is known is counted under the caller\'s tenant, not under "-"', async () => {
    const acme = { id: "acme" };
    const ctx = createContextFor(
      testApp(busyDb),
      new Headers({ authorization: `Bearer ${TOKENS.acme}` }),
      new Headers(),
    );
    expect((await ctx.getPrincipal())?.tenantId).toBe(acme.id); // found while the pool was free
    const before = {
      acme: counted(CounterEvent.STORE_BUSY, acme.id),
      unknown: counted(CounterEvent.STORE_BUSY, "-"),
    };
    const failure = await whileHeld(() =>
      createCaller(ctx)
        .orders.list()
        .then(
          () => null,
          (error: unknown) => error,
        ),
    );
    expect(failure).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
    expect(counted(CounterEvent.STORE_BUSY, acme.id)).toBe(before.acme + 1);
    expect(counted(CounterEvent.STORE_BUSY, "-")).toBe(before.unknown);
  });
});
