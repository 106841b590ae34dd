// The background jobs' log while PostgreSQL is really stopped: one line when it goes, silence
// while it is gone (however often the jobs fail), one line when it is back.
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, poolOf, type Db } from "./db/client";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../../tools/db/embedded";
import { createJobLog, oneLine } from "./job-log";

const PRISMA_OUTAGE =
  "[outbox] \nInvalid `prisma.$queryRaw()` invocation:\n\n\nRaw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5`";

let dataDir: string;
let server: EmbeddedServer;
let db: Db;

beforeAll(async () => {
  dataDir = await makeTempDataDir("once-joblog-");
  server = await startEmbeddedPostgres({ dataDir, persistent: true });
  await server.createDatabase("joblog");
  db = createDb(server.url("joblog"), { max: 2 });
});

afterAll(async () => {
  await db.$disconnect();
  await server.stop();
  await rm(path.dirname(dataDir), { recursive: true, force: true });
});

describe("the job log", () => {
  it("turns a multi-line message into one line", () => {
    expect(oneLine(PRISMA_OUTAGE)).toBe(
      "[outbox] Invalid `prisma.$queryRaw()` invocation: Raw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:5`",
    );
  });

  it("says a repeated failure once per window, and each different one", () => {
    const lines: string[] = [];
    const log = createJobLog(db, (l) => lines.push(l), { repeatMs: 60_000 });
    for (let i = 0; i < 5; i++) log.log("[reconciliation] provider books unavailable");
    log.log("[sweeper] something else");
    log.stop();
    expect(lines).toEqual(["[reconciliation] provider books unavailable", "[sweeper] something else"]);
  });

  it("a job's failure that is not an outage is one line, once per window", async () => {
    const lines: string[] = [];
    const log = createJobLog(db, (l) => lines.push(l), { repeatMs: 60_000 });
    const refused = await db.$queryRawUnsafe("SELECT * FROM no_such_table").catch((error: unknown) => error);
    for (let i = 0; i < 3; i++) log.failed("reconciliation", refused);
    log.stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[reconciliation\] .*no_such_table/);
    expect(lines[0]).not.toContain("\n");
  });

  it("while PostgreSQL is stopped: one line when it goes, none while it is gone, one when it is back", async () => {
    const port = server.port;
    let announceBack!: () => void;
    const back = new Promise<void>((resolve) => (announceBack = resolve));
    const lines: string[] = [];
    const log = createJobLog(
      db,
      (l) => {
        lines.push(l);
        if (l.includes("reachable again")) announceBack();
      },
      { probeMs: 100 },
    );

    await server.stop(); // for real: the probe's SELECT 1 is refused, and so are the jobs' queries
    try {
      // What the jobs really get: Prisma's error through the adapter, and pg's own from the pool.
      const prismaError = await db.$queryRaw`SELECT 1`.catch((error: unknown) => error);
      const poolError = await poolOf(db)!
        .query("SELECT 1")
        .catch((error: unknown) => error);
      log.failed("outbox", prismaError);
      for (let i = 0; i < 20; i++) log.failed(i % 2 ? "provider-events" : "outbox", i % 2 ? poolError : prismaError);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^\[jobs\] the database cannot be reached: background jobs retry quietly until it is back \(\[outbox\] /);
      expect(lines[0]).not.toContain("\n");
    } finally {
      server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
    }
    await back;
    log.stop();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("[jobs] the database is reachable again: background jobs resume");
  });
});
