// No reconnect on conflict. With @prisma/adapter-pg, a statement that fails (e.g. a unique
// violation, P2002) makes the pool throw its connection away, and the next request pays for a new
// one (~19× the cost of the request). The engine's hot path never issues a statement that can fail
// on conflict; this test proves it by watching the pool's backends in pg_stat_activity.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useBackendObserver } from "./support/backends";
import { useTestDatabase } from "./support/database";
import { Prisma } from "./support/generated/client";
import { ENTRY_POINTS, effectsFor } from "./support/harness";

const POOL = 6;
const t = useTestDatabase({ poolMax: POOL });
const { poolBackends, fillPool } = useBackendObserver(t, POOL);

describe.each(ENTRY_POINTS)("through the $name", (entry) => {
  it("serves a burst of retries, duplicates and mismatches without opening a connection", async () => {
    const completed = `done-${randomUUID()}`;
    const value = `nr-${randomUUID()}`;
    expect((await entry.call(t.db, { key: completed, input: { value } })).status).toBe(200);
    await fillPool();
    const before = await poolBackends();

    const burstKey = `burst-${randomUUID()}`;
    const burstValue = `nr-burst-${randomUUID()}`;
    const answers = await Promise.all([
      ...Array.from({ length: 100 }, () => entry.call(t.db, { key: completed, input: { value } })), // replays
      ...Array.from({ length: 20 }, () =>
        entry.call(t.db, { key: completed, input: { value: "other" } }),
      ), // 422
      ...Array.from({ length: 32 }, () =>
        entry.call(t.db, { key: burstKey, input: { value: burstValue } }),
      ), // one runs
    ]);

    expect(answers.slice(0, 100).every((a) => a.status === 200 && a.replayed)).toBe(true);
    expect(answers.slice(100, 120).every((a) => a.status === 422)).toBe(true);
    expect(await effectsFor(t.db, burstValue)).toBe(1);
    expect(await poolBackends()).toEqual(before);
  });
});

describe("the measurement itself", () => {
  it("does see the reconnect that a create + catch P2002 causes (so the test above can fail)", async () => {
    await fillPool();
    const before = await poolBackends();
    const key = `p2002-${randomUUID()}`;
    const row = {
      scope: "acme",
      key,
      procedure: "effect",
      fingerprint: "0".repeat(64),
      status: "COMPLETED" as const,
      expiresAt: new Date(Date.now() + 60_000),
    };
    await t.db.idempotencyKey.create({ data: row });
    const error = await t.db.idempotencyKey.create({ data: row }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    expect((error as Prisma.PrismaClientKnownRequestError).code).toBe("P2002");
    await fillPool();
    expect(await poolBackends()).not.toEqual(before);
  });
});
