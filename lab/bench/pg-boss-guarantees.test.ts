// What pg-boss 10 keeps of the outbox's guarantees, read off the library itself (its own tables and
// its public API, on a real PostgreSQL), for the payments' move onto it (docs/design.md, "The
// outbox and the job queues"). Where it keeps one, the test says how; where it does not, the test
// pins the gap, so the part of ours that must stay is named by a test and not by a belief.
import PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_OUTBOX_CONFIG } from "../../src/payments";
import { useTestDatabase } from "../../src/test/database";

const testDb = useTestDatabase();
const db = () => testDb.db;
let boss: PgBoss;

/** pg-boss's row for a job, as its tables hold it. */
async function jobRow(id: string) {
  const rows = await db().$queryRaw<
    { state: string; retry_count: number; wait_s: number; data: unknown }[]
  >`SELECT "state"::text AS "state", "retry_count",
           EXTRACT(epoch FROM "start_after" - now())::float8 AS "wait_s", "data"
    FROM pgboss.job WHERE "id" = ${id}::uuid`;
  return rows[0]!;
}

/** A payment job enqueued, then fetched by a worker (its first attempt). */
async function fetchedJob(queue: string) {
  const data = { idempotencyKey: `key-${queue}`, orderId: "order-1" };
  const id = (await boss.send(queue, data))!;
  const [job] = await boss.fetch<typeof data>(queue, { includeMetadata: true });
  expect(job).toMatchObject({ id, data, retryCount: 0 });
  return { id, data };
}

beforeAll(async () => {
  boss = new PgBoss({ connectionString: testDb.url, schedule: false, supervise: false });
  boss.on("error", () => {});
  await boss.start();
});
afterAll(() => boss.stop({ graceful: false, wait: true }));

describe("pg-boss 10 against the outbox's guarantees", () => {
  it("hands a dead worker's job on once its expiry passed, at its next maintenance", async () => {
    await boss.createQueue("expiry", { name: "expiry", expireInSeconds: 60, retryLimit: 3 });
    const { id, data } = await fetchedJob("expiry");
    // The worker died holding it: nothing completes it. Its expiry passes (moved, not waited for)…
    await db().$executeRaw`
      UPDATE pgboss.job SET "started_on" = now() - interval '61 seconds' WHERE "id" = ${id}::uuid`;
    expect(await boss.fetch("expiry")).toEqual([]);
    // …and the maintenance pg-boss's supervisor runs every maintenanceIntervalSeconds frees it.
    await boss.maintain();
    const [again] = await boss.fetch<typeof data>("expiry", { includeMetadata: true });
    // The same job, the same idempotency key, its attempt counted: the fence for its completion.
    expect(again).toMatchObject({ id, data, retryCount: 1 });
  });

  it("dead-letters a job whose retries are spent, with its data", async () => {
    await boss.createQueue("payments-dead", { name: "payments-dead" });
    await boss.createQueue("spent", { name: "spent", retryLimit: 0, deadLetter: "payments-dead" });
    const { id, data } = await fetchedJob("spent");
    await boss.fail("spent", id, new Error("provider unreachable"));
    expect((await jobRow(id)).state).toBe("failed");
    const [dead] = await boss.fetch("payments-dead");
    expect(dead?.data).toEqual(data);
  });

  it("retries a failure while retries are left, whatever it was: a refusal must be dead-lettered by us", async () => {
    await boss.createQueue("refused", { name: "refused", retryLimit: 8 });
    const { id } = await fetchedJob("refused");
    await boss.fail("refused", id, new Error("card_declined"));
    expect((await jobRow(id)).state).toBe("retry");
  });

  it("backs off without a ceiling: OUTBOX_MAX_BACKOFF_MS has no counterpart", async () => {
    const { baseBackoffMs, maxBackoffMs } = DEFAULT_OUTBOX_CONFIG;
    await boss.createQueue("backoff", {
      name: "backoff",
      retryLimit: 16,
      retryDelay: baseBackoffMs / 1000,
      retryBackoff: true,
    });
    const { id } = await fetchedJob("backoff");
    // A job that has failed ten times (an outage longer than our retry budget allows for).
    await db().$executeRaw`UPDATE pgboss.job SET "retry_count" = 10 WHERE "id" = ${id}::uuid`;
    await boss.fail("backoff", id, new Error("provider unreachable"));
    const row = await jobRow(id);
    expect(row.state).toBe("retry");
    // pg-boss waits retryDelay · 2^(n+1) / 2 · (1 + random), 2 048 s at least here; the outbox's
    // waits stop growing at maxBackoffMs (300 s), and pg-boss has no setting that caps them.
    expect(row.wait_s).toBeGreaterThan(2_000);
    expect(row.wait_s * 1000).toBeGreaterThan(maxBackoffMs);
  });
});
