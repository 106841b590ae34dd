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
    const prismaWaited = Object.assign(
      new Error("Timed out fetching a new connection from the connection pool."),
      { code: "P2024" },
    );
    expect(classifyStoreFailure(new Error("wrapped", { cause: prismaWaited }))).toBe(
      StoreFailure.BUSY,
    );

    for (const down of [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
      new Error("Connection terminated due to connection timeout"),
      Object.assign(new Error("the database system is shutting down"), { code: "57P03" }),
      new AggregateError([Object.assign(new Error("refused"), { code: "ECONNREFUSED" })]),
    ]) {
      expect(classifyStoreFailure(down), down.message).toBe(StoreFailure.UNAVAILABLE);
    }
    const refused = await t.pool.query("SELECT 1/0").catch((e: unknown) => e);
    expect(classifyStoreFailure(refused)).toBeNull();
  });
});
