// Busy is busy, down is down, in the engine and the app alike (one classifier). While PostgreSQL
// is up and the pool saturated, every refusal says store_busy: with every pool connection held
// (open transactions, a statement waiting on a lock), and with new connections that do not come
// up in time (a starved server whose logins hang while it serves the connections it has: the
// cold burst that used to answer store_unavailable). With PostgreSQL stopped for real, every
// refusal says store_unavailable. Everything held is let go by promises, never by a timer.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reasonOf } from "@once/idempotency";
import { callTrpc, TOKENS } from "@/test/http";
import { useOwnPostgres } from "@/test/own-postgres";
import { stallablePostgres, type StallablePostgres } from "@/test/stallable-postgres";
import { testApp } from "@/test/app";
import { createContextFor } from "../api/context";
import { createCaller } from "../api/root";
import { createDb, poolOf, type Db } from "./client";

const own = useOwnPostgres({ prefix: "once-busy-or-down-" });
const POOL_MAX = 3;
/** The test's store wait: refusals come quickly; nothing here measures it. */
const WAIT_MS = 300;
let forwarder: StallablePostgres;
let db: Db;
let productId: string;

beforeAll(async () => {
  forwarder = await stallablePostgres(own.url);
  db = createDb(forwarder.url, { max: POOL_MAX, connectTimeoutMs: WAIT_MS });
  productId = (await own.db.product.findFirstOrThrow({ select: { id: true } })).id;
});

afterAll(async () => {
  await db?.$disconnect();
  await forwarder?.close();
});

/**
 * Every way in, made ready while the pool is free (the caller's identity looked up, so the
 * mutation through createCaller goes straight to the engine's middleware); `run` answers with the
 * reason of every refusal, "ok" for a success.
 */
async function waysIn(client: Db) {
  const app = testApp(client);
  const headers = new Headers({
    authorization: `Bearer ${TOKENS.acme}`,
    "idempotency-key": crypto.randomUUID(),
  });
  const ctx = createContextFor(app, headers, new Headers());
  expect(await ctx.getPrincipal()).toMatchObject({ tenantId: "acme" });
  const input = { items: [{ productId, quantity: 1 }] };
  const viaRoute = (path: string, extra: object = {}) =>
    callTrpc(client, { path, ...extra }).then((a) =>
      a.status === 200 ? "ok" : reasonField(a.json),
    );
  const thrown = (call: Promise<unknown>) =>
    call.then(
      () => "ok",
      (error: unknown) => reasonOf(error) ?? String(error),
    );
  const response = { status: 200, body: "{}", contentType: "application/json" };
  return {
    run: () =>
      Promise.all([
        viaRoute("catalog.list", { method: "GET" }),
        viaRoute("orders.list", { token: TOKENS.acme, method: "GET" }),
        viaRoute("checkout.placeOrder", { token: TOKENS.acme, key: crypto.randomUUID(), input }),
        thrown(createCaller(ctx).checkout.placeOrder(input)),
        thrown(
          app.engine.execute(
            { scope: "acme", key: crypto.randomUUID(), procedure: "test.direct", input: {} },
            async () => ({ kind: "success", response }),
          ),
        ),
      ]),
  };
}

/**
 * Every way in answers (a fresh set, on a free pool). On a loaded machine a new connection's login
 * can outlast the store's wait, which is rightly `store_busy`: such a round is sent again, while
 * any other answer fails at once.
 */
async function allServed(client: Db): Promise<void> {
  for (let round = 1; ; round++) {
    const answers = await (await waysIn(client)).run();
    if (answers.every((answer) => answer === "ok")) return;
    expect(answers.filter((answer) => answer !== "ok" && answer !== "store_busy")).toEqual([]);
    expect(round, `still store_busy after ${round} rounds: ${answers.join(", ")}`).toBeLessThan(20);
  }
}

function reasonField(json: unknown): string {
  const data = (json as { error?: { data?: { reason?: string } } }).error?.data;
  return data?.reason ?? JSON.stringify(json);
}

/** Holds every pool connection: `POOL_MAX - 1` in open transactions, one waiting on a lock. */
async function holdEveryConnection() {
  const pool = poolOf(db)!;
  const lock = new pg.Client({ connectionString: own.url });
  await lock.connect();
  await lock.query("SELECT pg_advisory_lock(42)");
  const inTransaction: pg.PoolClient[] = [];
  for (let i = 0; i < POOL_MAX - 1; i++) {
    const client = await pool.connect();
    await client.query("BEGIN");
    inTransaction.push(client);
  }
  const waiting = await pool.connect();
  const blocked = waiting.query("SELECT pg_advisory_lock(42), pg_advisory_unlock(42)");
  return async () => {
    await lock.query("SELECT pg_advisory_unlock(42)");
    await blocked;
    waiting.release();
    await lock.end();
    for (const client of inTransaction) {
      await client.query("ROLLBACK");
      client.release();
    }
  };
}

describe("a saturated pool while PostgreSQL is up: every refusal is store_busy", () => {
  it("every pool connection held (open transactions, a statement waiting on a lock)", async () => {
    await allServed(db);
    const ways = await waysIn(db);
    const release = await holdEveryConnection();
    let reasons: string[];
    try {
      reasons = await ways.run();
    } finally {
      await release();
    }
    expect(reasons).toEqual(Array(5).fill("store_busy"));
    await allServed(db);
  });

  it("new connections that do not come up in time while PostgreSQL serves the ones it has", async () => {
    // A pool of one connection so far, held in a transaction: every request needs a new one.
    const cold = createDb(forwarder.url, { max: POOL_MAX, connectTimeoutMs: WAIT_MS });
    const pool = poolOf(cold)!;
    const ways = await waysIn(cold);
    const held = await pool.connect();
    expect(pool.totalCount).toBe(1);
    await held.query("BEGIN");
    forwarder.stall();
    let reasons: string[];
    try {
      reasons = await ways.run();
      // PostgreSQL is up: it answers on the connection it has.
      expect((await held.query("SELECT 1 AS up")).rows).toEqual([{ up: 1 }]);
    } finally {
      forwarder.resume();
      await held.query("ROLLBACK");
      held.release();
    }
    expect(reasons).toEqual(Array(5).fill("store_busy"));
    await allServed(cold);
    await cold.$disconnect();
  });
});

describe("PostgreSQL stopped: every refusal is store_unavailable", () => {
  it("with the server really stopped, then served again once it is back", async () => {
    await allServed(db);
    const ways = await waysIn(db);
    await own.stop();
    let reasons: string[];
    try {
      reasons = await ways.run();
    } finally {
      await own.start();
    }
    expect(reasons).toEqual(Array(5).fill("store_unavailable"));
    await allServed(db);
  });
});
