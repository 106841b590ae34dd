import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Counters, trimCounterMinutes } from "../src/entry/jobs";
import { runnerOf } from "../src/entry/sql";
import { useTestDatabase } from "./support/database";
import { engineFor, wrapperEntry } from "./support/harness";

const t = useTestDatabase();

async function counted(scope: string, event: string): Promise<number> {
  const rows = await t.db.idempotencyCounter.findMany({ where: { scope, event } });
  return rows.reduce((n, r) => n + Number(r.count), 0);
}

describe("counters", () => {
  it("add up flushes from several instances in the table", async () => {
    const scope = `c-${randomUUID()}`;
    const a = new Counters();
    const b = new Counters();
    a.increment(scope, "p", "executed", 2);
    b.increment(scope, "p", "executed", 3);
    b.increment(scope, "p", "replayed");
    await Promise.all([a.flush(runnerOf(t.db)), b.flush(runnerOf(t.db))]);
    expect(await counted(scope, "executed")).toBe(5);
    expect(await counted(scope, "replayed")).toBe(1);
    expect(a.snapshot()).toEqual([]);
  });

  it("keep deltas that could not be flushed, for the next flush", async () => {
    const scope = `kept-${randomUUID()}`;
    const c = new Counters();
    c.increment(scope, "p", "executed", 4);
    const failing = {
      query: () => Promise.reject(new Error("down")),
      execute: () => Promise.reject(new Error("down")),
    };
    await expect(c.flush(failing)).rejects.toThrow("down");
    expect(c.snapshot()).toEqual([{ scope, procedure: "p", event: "executed", count: 4 }]);
    await c.flush(runnerOf(t.db));
    expect(await counted(scope, "executed")).toBe(4);
  });

  it("count what the engine did, per scope and procedure", async () => {
    const key = `k-${randomUUID()}`;
    const value = `v-${randomUUID()}`;
    await wrapperEntry.call(t.db, { key, input: { value } });
    await wrapperEntry.call(t.db, { key, input: { value } });
    await wrapperEntry.call(t.db, { key, input: { value: "different" } });
    const engine = engineFor(t.db);
    await engine.counters.flush(engine.run);
    const rows = await t.db.idempotencyCounter.findMany({
      where: { scope: "acme", procedure: "effect" },
    });
    const byEvent = Object.fromEntries(rows.map((r) => [r.event, Number(r.count)]));
    expect(byEvent).toMatchObject({ executed: 1, replayed: 1, mismatches: 1 });
  });

  it("add each flush to the current minute too, and minutes older than a day are trimmed", async () => {
    const scope = `m-${randomUUID()}`;
    const c = new Counters();
    c.increment(scope, "p", "executed", 2);
    await c.flush(runnerOf(t.db));
    c.increment(scope, "p", "executed", 3);
    await c.flush(runnerOf(t.db));
    const minutes = await t.db.idempotencyCounterMinute.findMany({ where: { scope } });
    expect(minutes.map((m) => Number(m.count)).reduce((a, b) => a + b, 0)).toBe(5);
    await t.db
      .$executeRaw`INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
      VALUES (${scope}, 'p', 'executed', now() - interval '25 hours', 9)`;
    expect(await trimCounterMinutes(runnerOf(t.db))).toBeGreaterThanOrEqual(1);
    const left = await t.db.idempotencyCounterMinute.findMany({ where: { scope } });
    expect(left.every((m) => m.minute.getTime() > Date.now() - 24 * 3600_000)).toBe(true);
  });
});
