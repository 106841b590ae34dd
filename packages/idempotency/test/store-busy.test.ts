// Busy is not down: a pool of one connection, held by someone else, cannot hand the engine a
// connection within its wait. That is `503 store_busy` with Retry-After, counted as store_busy,
// nothing executed; the same key runs once the connection is free. And the one classifier tells
// the pool's wait from an outage in every wrapping the drivers use.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyStoreFailure, CounterEvent, StoreFailure } from "../src/entry/operator";
import { connect, useTestDatabase, type Db } from "./support/database";
import { engineFor, ENTRY_POINTS, effectsFor, executions, reasonOf } from "./support/harness";
import type pg from "pg";

const t = useTestDatabase();
let busy: { db: Db; pool: pg.Pool };

beforeAll(() => {
  busy = connect(t.url, 1, 300); // one connection; a caller waits at most 300 ms for it
});

afterAll(async () => {
  await busy.db.$disconnect();
  await busy.pool.end();
});

const busyEvents = (db: Db) =>
  engineFor(db)
    .counters.snapshot()
    .filter((d) => d.event === CounterEvent.STORE_BUSY)
    .reduce((n, d) => n + d.count, 0);

describe.each(ENTRY_POINTS)("a pool with no free connection, through the $name", (entry) => {
  const id = entry.name.replace(/\W+/g, "-");

  it("answers 503 store_busy with Retry-After, runs nothing, counts it, and runs the same key once a connection is free", async () => {
    const key = `busy-${id}`;
    const value = `busy-value-${id}`;
    const held = await busy.pool.connect(); // the pool's only connection, checked out elsewhere
    const before = { executions: executions.count, busy: busyEvents(busy.db) };
    let answer;
    try {
      answer = await entry.call(busy.db, { key, input: { value } });
    } finally {
      held.release();
    }
    expect(answer.status).toBe(503);
    expect(reasonOf(answer)).toBe("store_busy");
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(executions.count).toBe(before.executions);
    expect(busyEvents(busy.db)).toBe(before.busy + 1);

    const retry = await entry.call(busy.db, { key, input: { value } });
    expect(retry).toMatchObject({ status: 200, replayed: false });
    expect(await effectsFor(t.db, value)).toBe(1);
  });
});

describe("classifyStoreFailure", () => {
  it("tells the pool's wait (busy) from an outage (unavailable) and from the database's refusals (null)", async () => {
    const held = await busy.pool.connect();
    const waited = await busy.pool.query("SELECT 1").catch((e: unknown) => e);
    held.release();
    expect(classifyStoreFailure(waited)).toBe(StoreFailure.BUSY);
    // Every wait that runs out is busy: the queue's, a new connection's login (pg-pool's and pg's
    // own words), Prisma's; and a server at max_connections is load too.
    for (const waitedOut of [
      new Error("wrapped", {
        cause: Object.assign(
          new Error("Timed out fetching a new connection from the connection pool."),
          { code: "P2024" },
        ),
      }),
      new Error("Connection terminated due to connection timeout", {
        cause: new Error("Connection terminated unexpectedly"),
      }),
      new Error("timeout expired"),
      Object.assign(new Error("sorry, too many clients already"), { code: "53300" }),
      { kind: "TooManyConnections", cause: "sorry, too many clients already" },
    ]) {
      expect(classifyStoreFailure(waitedOut), JSON.stringify(waitedOut)).toBe(StoreFailure.BUSY);
    }

    for (const down of [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("the database system is shutting down"), { code: "57P03" }),
      Object.assign(new Error("terminating connection due to administrator command"), {
        code: "57P01",
      }),
      new AggregateError([Object.assign(new Error("refused"), { code: "ECONNREFUSED" })]),
      // A connection a restore left behind (the app's pool discards it; a retry is served).
      Object.assign(new Error("cache lookup failed for type 16414"), { code: "XX000" }),
    ]) {
      expect(classifyStoreFailure(down), down.message).toBe(StoreFailure.UNAVAILABLE);
    }
    const refused = await t.pool.query("SELECT 1/0").catch((e: unknown) => e);
    expect(classifyStoreFailure(refused)).toBeNull();
    // A wrong password is the deployment's mistake, passed on in PostgreSQL's words.
    const url = new URL(t.url);
    url.password = "not-the-password";
    const stranger = connect(url.toString(), 1, 2_000);
    const wrongPassword = await stranger.pool.query("SELECT 1").catch((e: unknown) => e);
    await stranger.db.$disconnect();
    expect(wrongPassword).toMatchObject({ code: "28P01" });
    expect(classifyStoreFailure(wrongPassword)).toBeNull();
  });
});
