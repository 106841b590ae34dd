import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { EFFECTS_TABLE_SQL, wrapperEntry } from "../../test/engine-harness";
import { engineFor } from "../engine";
import { Counters } from "./counters";

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
    await Promise.all([a.flush(t.db), b.flush(t.db)]);
    expect(await counted(scope, "executed")).toBe(5);
    expect(await counted(scope, "replayed")).toBe(1);
    expect(a.snapshot()).toEqual([]);
  });

  it("count what the engine did, per scope and procedure", async () => {
    await t.db.$executeRawUnsafe(EFFECTS_TABLE_SQL);
    const key = `k-${randomUUID()}`;
    const value = `v-${randomUUID()}`;
    await wrapperEntry.call(t.db, { key, input: { value } });
    await wrapperEntry.call(t.db, { key, input: { value } });
    await wrapperEntry.call(t.db, { key, input: { value: "different" } });
    const counters = engineFor(t.db).counters;
    await counters.flush(t.db);
    const rows = await t.db.idempotencyCounter.findMany({ where: { scope: "acme", procedure: "effect" } });
    const byEvent = Object.fromEntries(rows.map((r) => [r.event, Number(r.count)]));
    expect(byEvent).toMatchObject({ executed: 1, replayed: 1, mismatches: 1 });
  });
});
