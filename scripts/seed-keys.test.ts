// `npm run seed:keys` as an operator runs it: a child process that finishes, seeds what it says,
// and leaves what is real alone (a counter minute that has a count, a key it did not make).
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { CounterEvent } from "@once/idempotency/reasons";
import { describe, expect, it } from "vitest";
import { insertKey } from "../src/test/admin-factory";
import { useTestDatabase } from "../src/test/database";

const t = useTestDatabase({ poolMax: 2 });
const ROOT = path.resolve(import.meta.dirname, "..");

describe("npm run seed:keys", () => {
  it(
    "exits with the keys, counter minutes and audit entries it announces, beside the real ones, never over them",
    { timeout: 120_000 },
    async () => {
      const real = await insertKey(t.db, { scope: "acme", key: "a-real-customer-key" });
      const [{ minute }] = await t.db.$queryRaw<[{ minute: Date }]>`
      INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
      VALUES ('acme', 'checkout.placeOrder', 'executed', date_trunc('minute', now()), 7) RETURNING "minute"`;
      await t.db.$executeRaw`
      INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count") VALUES ('acme', 'checkout.placeOrder', 'executed', 100000)`;

      const child = spawn(
        process.execPath,
        [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/seed-keys.ts", "3000"],
        {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: t.url },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let output = "";
      for (const stream of [child.stdout, child.stderr])
        stream.on("data", (d: Buffer) => (output += d));
      const [code] = (await once(child, "exit", { signal: AbortSignal.timeout(100_000) })) as [
        number,
      ];
      expect(code, output).toBe(0);

      const run = /\(run ([0-9a-f]{6})\)/.exec(output)?.[1];
      expect(run, output).toBeDefined();
      // 3 300 seeded, a tenth of 3 000 busted or released by an operator, so removed.
      expect(
        await t.db.idempotencyKey.count({ where: { key: { startsWith: `seed-${run}-` } } }),
      ).toBe(3000);
      const audited = await t.db.auditEntry.findMany({ select: { targetKey: true } });
      expect(audited.length).toBeGreaterThan(0);
      expect(audited.every((a) => a.targetKey?.startsWith(`seed-${run}-`))).toBe(true);
      expect(audited.some((a) => a.targetKey === real.key)).toBe(false);
      // The real minute keeps its count; the seed filled the minutes that had none.
      const counts = await t.db.idempotencyCounterMinute.findMany({
        where: { scope: "acme", procedure: "checkout.placeOrder", event: "executed" },
      });
      expect(Number(counts.find((c) => c.minute.getTime() === minute.getTime())?.count)).toBe(7);
      expect(counts.length).toBe(1440);
      // The total keeps the real count and gains exactly what the seed added (the real minute was
      // not).
      const seeded = counts.reduce((sum, c) => sum + Number(c.count), 0) - 7;
      const total = await t.db.idempotencyCounter.findUniqueOrThrow({
        where: {
          scope_procedure_event: {
            scope: "acme",
            procedure: "checkout.placeOrder",
            event: "executed",
          },
        },
      });
      expect(Number(total.count)).toBe(100_000 + seeded);
      expect(output).toMatch(/\[seed-keys\] \d+ counter minutes, 300 audit entries/);
      // 3 300 inserted, 66 of them stuck (97 and 99 of each hundred); the audit removed the newest
      // 300 finished or stuck keys (numbers 1 to 303, 6 of them stuck): 60 stuck leases remain.
      expect(
        await t.db.idempotencyKey.count({
          where: {
            key: { startsWith: `seed-${run}-` },
            status: "PROCESSING",
            leaseExpiresAt: { lt: new Date() },
          },
        }),
      ).toBe(60);
      expect(output).toMatch(/3000 seeded keys remain, 60 of them stuck leases/);
    },
  );

  it(
    "looks like a normal day: no incident it did not measure, and every timeline in order",
    { timeout: 120_000 },
    async () => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/seed-keys.ts", "2000"],
        {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: t.url },
          stdio: "ignore",
        },
      );
      const [code] = (await once(child, "exit", { signal: AbortSignal.timeout(100_000) })) as [
        number,
      ];
      expect(code).toBe(0);
      // Store errors, a busy store, the live-key cap, fenced writes: nothing of an incident.
      const incident = [
        CounterEvent.STORE_ERRORS,
        CounterEvent.STORE_BUSY,
        CounterEvent.TOO_MANY_KEYS,
        CounterEvent.FENCED,
      ];
      expect(await t.db.idempotencyCounter.count({ where: { event: { in: incident } } })).toBe(0);
      expect(
        await t.db.idempotencyCounterMinute.count({ where: { event: { in: incident } } }),
      ).toBe(0);
      // Mostly executed, some replays, a few of the rest.
      const totals = await t.db.idempotencyCounter.groupBy({
        by: ["event"],
        _sum: { count: true },
      });
      const total = (event: string) =>
        Number(totals.find((r) => r.event === event)?._sum.count ?? 0);
      expect(total(CounterEvent.EXECUTED)).toBeGreaterThan(5 * total(CounterEvent.REPLAYED));
      expect(total(CounterEvent.REPLAYED)).toBeGreaterThan(10 * total(CounterEvent.CONFLICTS));
      // A tenth of each run's keys audited (the first test's 300, this one's 200): that they are
      // gone and their timelines agree: scripts/seed-truth.test.ts.
      expect(await t.db.auditEntry.count()).toBe(300 + 200);
    },
  );
});
