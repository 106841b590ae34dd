// The background jobs' log while PostgreSQL is really stopped: one line when it goes, silence
// while it is gone (however often the jobs fail), one line when it is back.
import { describe, expect, it } from "vitest";
import { useOwnPostgres } from "../test/own-postgres";
import { poolOf } from "./db/client";
import { HealthMonitor } from "./health";
import { createJobLog, oneLine, type JobLog } from "./job-log";

const PRISMA_OUTAGE =
  "[outbox] \nInvalid `prisma.$queryRaw()` invocation:\n\n\nRaw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5`";

const pg = useOwnPostgres({ prefix: "once-joblog-", setup: false, poolMax: 2 });

/** The lines a job log with a one-minute repeat window wrote while `use` used it. */
function linesWritten(use: (log: JobLog) => void): string[] {
  const lines: string[] = [];
  const log = createJobLog(new HealthMonitor(pg.db), (l) => lines.push(l), { repeatMs: 60_000 });
  use(log);
  log.stop();
  return lines;
}

describe("the job log", () => {
  it("turns a multi-line message into one line", () => {
    expect(oneLine(PRISMA_OUTAGE)).toBe(
      "[outbox] Invalid `prisma.$queryRaw()` invocation: Raw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5`",
    );
  });

  it("says a repeated failure once per window, and each different one", () => {
    const lines = linesWritten((log) => {
      for (let i = 0; i < 5; i++) log.log("[reconciliation] provider books unavailable");
      log.log("[sweeper] something else");
    });
    expect(lines).toEqual([
      "[reconciliation] provider books unavailable",
      "[sweeper] something else",
    ]);
  });

  it("a job's failure that is not an outage is one line, once per window", async () => {
    const refused = await pg.db
      .$queryRawUnsafe("SELECT * FROM no_such_table")
      .catch((error: unknown) => error);
    const lines = linesWritten((log) => {
      for (let i = 0; i < 3; i++) log.failed("reconciliation", refused);
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[reconciliation\] .*no_such_table/);
    expect(lines[0]).not.toContain("\n");
  });

  it("a busy pool is said as busy, once per window, not as the database being unreachable", () => {
    const busy = new Error("timeout exceeded when trying to connect");
    const lines = linesWritten((log) => {
      for (let i = 0; i < 3; i++) log.failed("outbox", busy);
      log.log("[outbox] a later line");
    });
    expect(lines).toEqual([
      "[outbox] the database is busy (no pool connection came free in time): the job retries",
      "[outbox] a later line",
    ]);
  });

  it("while PostgreSQL is stopped: one line when it goes, none while it is gone, one when it is back", async () => {
    let announceBack!: () => void;
    const back = new Promise<void>((resolve) => (announceBack = resolve));
    const lines: string[] = [];
    const health = new HealthMonitor(pg.db, { intervalMs: 100 });
    const log = createJobLog(health, (l) => {
      lines.push(l);
      if (l.includes("reachable again")) announceBack();
    });

    await pg.stop(); // for real: the probe's SELECT 1 is refused, and so are the jobs' queries
    try {
      // What the jobs really get: Prisma's error through the adapter, and pg's own from the pool.
      const prismaError = await pg.db.$queryRaw`SELECT 1`.catch((error: unknown) => error);
      const poolError = await poolOf(pg.db)!
        .query("SELECT 1")
        .catch((error: unknown) => error);
      log.failed("outbox", prismaError);
      for (let i = 0; i < 20; i++)
        log.failed(i % 2 ? "provider-events" : "outbox", i % 2 ? poolError : prismaError);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^\[jobs\] the database cannot be reached: background jobs retry quietly until it is back \(\[outbox\] /,
      );
      expect(lines[0]).not.toContain("\n");
    } finally {
      await pg.start();
    }
    await back;
    log.stop();
    health.stop();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("[jobs] the database is reachable again: background jobs resume");
  });
});
