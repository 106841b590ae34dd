// The reaper and the sweeper against a real PostgreSQL: what they delete, what they leave, that
// live traffic goes on beside them, and that one instance runs each job at a time.
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { reapExpiredKeys, sweepStuckKeys } from "../src/entry/jobs";
import { poolRunner, runnerOf, type SqlRunner } from "../src/entry/sql";
import { JobLock } from "../src/jobs/lock";
import { reaperLagSeconds } from "../src/jobs/reaper";
import { startReaper } from "../src/jobs/scheduler";
import { useTestDatabase } from "./support/database";
import { Gate, wrapperEntry } from "./support/harness";

const t = useTestDatabase({ poolMax: 12 });
/** Statements straight to the pool, as the app runs its jobs; `prisma` runs them through Prisma. */
const pool = (): SqlRunner => poolRunner(t.pool);
const prisma = (): SqlRunner => runnerOf(t.db);

/** Another instance in the middle of a job's batch: holds the job's lock until the gate opens. */
async function holdLock(lockId: number): Promise<{ release: () => Promise<void> }> {
  const gate = new Gate();
  const holder = t.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(${lockId}::bigint)::text AS "locked"`;
    await gate.park();
  });
  await gate.reached;
  return { release: async () => (gate.open(), await holder) };
}

/**
 * Keys written from literal offsets against the database clock, not computed like the code does.
 */
async function plant(
  scope: string,
  rows: { count: number; status: string; expiresIn: string; leaseEndsIn?: string },
) {
  await t.db.$executeRawUnsafe(
    `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
     SELECT $1, $2 || g, 'effect', repeat('0', 64), $3::"IdempotencyStatus",
            CASE WHEN $4::text IS NULL THEN NULL ELSE gen_random_uuid() END,
            now() + $4::interval, now() + $5::interval
     FROM generate_series(1, $6::int) AS g`,
    scope,
    `${scope}-${randomUUID()}-`,
    rows.status,
    rows.leaseEndsIn ?? null,
    rows.expiresIn,
    rows.count,
  );
}

/** `count` PROCESSING keys kept a day, their lease ending `leaseEndsIn` from now. */
const plantProcessing = (scope: string, count: number, leaseEndsIn: string) =>
  plant(scope, { count, status: "PROCESSING", expiresIn: "1 day", leaseEndsIn });

async function countWhere(sql: string): Promise<number> {
  const [row] = await t.db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS "n" FROM "IdempotencyKey" WHERE ${sql}`,
  );
  return row!.n;
}

describe("the reaper", () => {
  it("deletes only expired keys, in batches, while reservations go on beside it", async () => {
    await plant("reap", { count: 1_200, status: "COMPLETED", expiresIn: "-1 minute" });
    await plant("reap", { count: 300, status: "COMPLETED", expiresIn: "1 hour" });
    await plant("reap", {
      count: 50,
      status: "PROCESSING",
      expiresIn: "1 hour",
      leaseEndsIn: "30 seconds",
    });

    const traffic = Array.from({ length: 40 }, (_, i) =>
      wrapperEntry.call(t.db, {
        key: `live-${randomUUID()}-${i}`,
        input: { value: `reap-traffic-${i}` },
      }),
    );
    const [reaped, ...answers] = await Promise.all([
      reapExpiredKeys(pool(), { batchSize: 250 }),
      ...traffic,
    ]);

    expect(reaped).toMatchObject({ ran: true, deleted: 1_200 });
    expect(reaped.batches).toBeGreaterThanOrEqual(5);
    expect(answers.filter((a) => a.status !== 200).map((a) => a.text)).toEqual([]);
    expect(await countWhere(`"scope" = 'reap' AND "expiresAt" <= now()`)).toBe(0);
    expect(await countWhere(`"scope" = 'reap'`)).toBe(350);
    expect(await countWhere(`"scope" = 'acme' AND "key" LIKE 'live-%'`)).toBe(40);
  });

  it.each([
    ["the pg pool", pool],
    ["Prisma", prisma],
  ])(
    "runs on one instance at a time, through %s: a round skips while another instance holds the lock",
    async (_name, runner) => {
      const scope = `reap2-${randomUUID()}`;
      await plant(scope, { count: 20, status: "COMPLETED", expiresIn: "-1 minute" });
      const other = await holdLock(JobLock.REAPER);
      expect(await reapExpiredKeys(runner(), { batchSize: 10 })).toEqual({
        ran: false,
        deleted: 0,
        batches: 0,
        caughtUp: false,
      });
      expect(await countWhere(`"scope" = '${scope}'`)).toBe(20);
      await other.release();
      expect(await reapExpiredKeys(runner(), { batchSize: 10 })).toMatchObject({
        ran: true,
        deleted: 20,
      });
      expect(await countWhere(`"scope" = '${scope}'`)).toBe(0);
    },
  );

  it("never deletes a row a live request holds locked (SKIP LOCKED), and never waits for it", async () => {
    await plant("reap3", { count: 3, status: "COMPLETED", expiresIn: "-1 minute" });
    const [locked] = await t.db.$queryRaw<
      { id: string }[]
    >`SELECT "id" FROM "IdempotencyKey" WHERE "scope" = 'reap3' LIMIT 1`;
    const gate = new Gate();
    const holder = t.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM "IdempotencyKey" WHERE "id" = ${locked!.id}::uuid FOR UPDATE`;
      await gate.park();
    });
    await gate.reached;
    const reaped = await reapExpiredKeys(pool());
    gate.open();
    await holder;
    expect(reaped.deleted).toBeGreaterThanOrEqual(2);
    expect(await countWhere(`"id" = '${locked!.id}'`)).toBe(1);
    expect((await reapExpiredKeys(prisma())).deleted).toBeGreaterThanOrEqual(1);
    expect(await countWhere(`"scope" = 'reap3'`)).toBe(0);
  });
});

describe("the reaper keeps up", () => {
  it("works through a backlog of many batches in one round, until caught up", async () => {
    await reapExpiredKeys(pool());
    await plant("backlog", { count: 3_000, status: "COMPLETED", expiresIn: "-1 minute" });
    const reaped = await reapExpiredKeys(pool(), { batchSize: 200 });
    expect(reaped).toMatchObject({ ran: true, deleted: 3_000, caughtUp: true });
    expect(reaped.batches).toBe(16); // 15 full batches, then one that found nothing more
    expect(await countWhere(`"scope" = 'backlog'`)).toBe(0);
  });

  it("ends a round at its time budget and says it is behind", async () => {
    await plant("budget", { count: 500, status: "COMPLETED", expiresIn: "-1 minute" });
    const reaped = await reapExpiredKeys(pool(), { batchSize: 100, budgetMs: 0 });
    expect(reaped).toEqual({ ran: true, deleted: 100, batches: 1, caughtUp: false });
    expect(await countWhere(`"scope" = 'budget'`)).toBe(400);
    await reapExpiredKeys(pool());
  });

  it("measures its lag: the age of the oldest key past retention, 0 when caught up", async () => {
    await reapExpiredKeys(pool());
    expect(await reaperLagSeconds(pool())).toBe(0);
    await plant("lag", { count: 3, status: "COMPLETED", expiresIn: "-90 seconds" });
    await plant("lag", { count: 3, status: "COMPLETED", expiresIn: "-10 seconds" });
    const lag = await reaperLagSeconds(prisma());
    expect(lag).toBeGreaterThanOrEqual(90);
    expect(lag).toBeLessThan(120);
    await reapExpiredKeys(pool());
    expect(await reaperLagSeconds(pool())).toBe(0);
  });

  it("warns in its log line when a round leaves it behind (here: another instance holds the lock), and catches up after", async () => {
    await reapExpiredKeys(pool());
    await plant("warn", { count: 10, status: "COMPLETED", expiresIn: "-10 minutes" });
    const other = await holdLock(JobLock.REAPER);
    const lines: string[] = [];
    let warned!: () => void;
    const warning = new Promise<void>((resolve) => (warned = resolve));
    const stop = startReaper(pool(), { intervalMs: 10, lagWarnSeconds: 300 }, (job, error) => {
      lines.push(`${job}: ${error.message}`);
      warned();
    });
    try {
      await warning;
      expect(lines[0]).toMatch(
        /^reaper: behind: the oldest key past retention is 6\d\d s old \(warning above 300 s\)/,
      );
      expect(await countWhere(`"scope" = 'warn'`)).toBe(10);
      await other.release();
      await vi.waitFor(async () => expect(await countWhere(`"scope" = 'warn'`)).toBe(0), {
        timeout: 60_000,
        interval: 20,
      });
    } finally {
      stop();
    }
  });
});

describe("the sweeper", () => {
  it("releases PROCESSING keys whose lease ended long ago, and nothing else", async () => {
    await plantProcessing("sweep", 5, "-10 minutes");
    await plantProcessing("sweep", 4, "-10 seconds");
    await plantProcessing("sweep", 3, "30 seconds");
    await plant("sweep", { count: 2, status: "COMPLETED", expiresIn: "1 day" });
    const swept = await sweepStuckKeys(pool(), { graceSeconds: 300 });
    expect(swept).toMatchObject({ ran: true, released: 5 });
    expect(swept.keys.every((k) => k.scope === "sweep")).toBe(true);
    expect(await countWhere(`"scope" = 'sweep'`)).toBe(9);
    expect(await countWhere(`"scope" = 'sweep' AND "status" = 'PROCESSING'`)).toBe(7);
  });

  it("skips while another instance holds its lock", async () => {
    await plantProcessing("sweep2", 2, "-10 minutes");
    const other = await holdLock(JobLock.SWEEPER);
    expect(await sweepStuckKeys(pool())).toEqual({ ran: false, released: 0, keys: [] });
    await other.release();
    expect(await sweepStuckKeys(pool())).toMatchObject({ ran: true, released: 2 });
  });
});
