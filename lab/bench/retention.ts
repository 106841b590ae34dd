// `npm run bench:retention`: does retention keep up? New keys at the highest rate this machine
// sustains, with a short retention, for minutes, through the engine (reserve, an empty handler,
// the fenced completion) with its own job scheduler. Every 10 s a row: the rate achieved, rows in
// the key table and how many are past retention, the table's size and dead tuples, the reaper's
// lag, and the requests' p99. Phase 1 runs with the reaper, phase 2 (same run, same rate) without:
// the control. With the reaper the row count should plateau near rate × (retention + interval).
// A measurement to cite, not a test.
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import pg from "pg";
import {
  createIdempotencyEngine,
  withIdempotency,
  type IdempotencyEngine,
} from "@once/idempotency";
import { createDb, type Tx } from "../../src/server/db/client";
import { makeTempDataDir, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { percentile } from "../../tools/stats";
import { runBench } from "./fail";

const RETENTION_SECONDS = Number(process.env.RETENTION_SECONDS ?? 20);
/**
 * The reaper's interval when caught up, scaled down with the retention (production: 60 s against 24
 * h).
 */
const REAPER_INTERVAL_MS = 5_000;
const WITH_REAPER_SECONDS = Number(process.env.WITH_REAPER_SECONDS ?? 180);
const WITHOUT_REAPER_SECONDS = Number(process.env.WITHOUT_REAPER_SECONDS ?? 60);
const CALIBRATE_SECONDS = 10;
const SAMPLE_EVERY_MS = 10_000;
const POOL_MAX = 10;
/** Requests in flight at most; past it a tick's requests are not sent (counted as dropped). */
const MAX_IN_FLIGHT = 64;
/** The paced rate, as a share of the closed-loop rate measured first: headroom for the reaper. */
const RATE_SHARE = Number(process.env.RETENTION_RATE_SHARE ?? 0.6);
const TENANTS = 8;

await runBench("bench:retention", async (step) => {
  step("start PostgreSQL");
  const server = await startEmbeddedPostgres({
    dataDir: await makeTempDataDir("once-bench-retention-"),
    persistent: false,
  });
  try {
    await server.createDatabase("retention");
    const url = server.url("retention");
    await setupDatabase(url, () => {}, { demo: true });
    const pool = new pg.Pool({ connectionString: url, max: POOL_MAX, idleTimeoutMillis: 0 });
    pool.on("error", () => {});
    const db = createDb(url, { pool, preparedStatements: true });
    const engine = createIdempotencyEngine<Tx>({
      prisma: db,
      pool,
      preparedStatements: true,
      config: {
        ttlSeconds: RETENTION_SECONDS,
        reaperIntervalMs: REAPER_INTERVAL_MS,
        replayCacheSize: 0,
      },
    });
    const latencies: number[] = [];
    let done = 0;
    const newKey = async () => {
      const started = performance.now();
      const scope = `tenant-${Math.floor(Math.random() * TENANTS)}`;
      await withIdempotency(
        engine,
        { scope, key: randomUUID(), operation: "retention.probe", request: { n: done } },
        async () => ({ ok: true }),
      );
      latencies.push(performance.now() - started);
      done++;
    };

    step(`calibrate: ${CALIBRATE_SECONDS} s closed loop, ${MAX_IN_FLIGHT / 4} concurrent`);
    const calibrateUntil = Date.now() + CALIBRATE_SECONDS * 1000;
    await Promise.all(
      Array.from({ length: MAX_IN_FLIGHT / 4 }, async () => {
        while (Date.now() < calibrateUntil) await newKey();
      }),
    );
    const closedLoopRate = done / CALIBRATE_SECONDS;
    const rate = Math.floor(closedLoopRate * RATE_SHARE);
    process.stderr.write(
      `[bench:retention] closed loop ${closedLoopRate.toFixed(0)} keys/s; pacing at ${rate}/s\n`,
    );
    await pool.query(`TRUNCATE "IdempotencyKey"`);

    const rows: string[] = [];
    const started = Date.now();
    let dropped = 0;
    let inFlight = 0;
    let lastDone = done;
    const sample = async (phase: string) => {
      const s = await sampleTable(pool, engine);
      const window = latencies.splice(0).sort((a, b) => a - b);
      const achieved = (done - lastDone) / (SAMPLE_EVERY_MS / 1000);
      lastDone = done;
      const row = `| ${Math.round((Date.now() - started) / 1000)} | ${phase} | ${achieved.toFixed(0)} | ${s.rows} | ${s.expired} | ${(s.bytes / 2 ** 20).toFixed(1)} | ${s.dead} | ${s.lag.toFixed(0)} | ${percentile(window, 99).toFixed(1)} | ${dropped} |`;
      rows.push(row);
      process.stderr.write(`${row}\n`);
    };
    const pace = async (seconds: number, phase: string) => {
      const until = Date.now() + seconds * 1000;
      let last = performance.now();
      let owed = 0;
      const sampler = setInterval(() => void sample(phase), SAMPLE_EVERY_MS);
      while (Date.now() < until) {
        // Owed by the clock, not per tick: a late timer must not lower the rate.
        const now = performance.now();
        owed += (rate * (now - last)) / 1000;
        last = now;
        for (; owed >= 1; owed--) {
          if (inFlight >= MAX_IN_FLIGHT) {
            dropped++;
            continue;
          }
          inFlight++;
          void newKey().finally(() => inFlight--);
        }
        await sleep(10);
      }
      clearInterval(sampler);
    };

    step(
      `phase 1: ${WITH_REAPER_SECONDS} s at ${rate} keys/s, retention ${RETENTION_SECONDS} s, reaper every ${REAPER_INTERVAL_MS / 1000} s`,
    );
    const stopJobs = engine.startJobs((job, error) =>
      process.stderr.write(`[${job}] ${error.message}\n`),
    );
    await pace(WITH_REAPER_SECONDS, "reaper on");
    await stopJobs();
    step(`phase 2 (control): ${WITHOUT_REAPER_SECONDS} s at the same rate, no reaper`);
    await pace(WITHOUT_REAPER_SECONDS, "reaper off");
    while (inFlight > 0) await sleep(10);

    console.log(
      `\nonce bench:retention — ${new Date().toISOString()} — node ${process.version}, PostgreSQL embedded, pool ${POOL_MAX}; ` +
        `closed loop ${closedLoopRate.toFixed(0)} keys/s, paced at ${rate} keys/s; retention ${RETENTION_SECONDS} s; ` +
        `expected plateau ≈ rate × (retention + interval) = ${rate * (RETENTION_SECONDS + REAPER_INTERVAL_MS / 1000)} rows\n`,
    );
    console.log(
      "| t s | phase | keys/s | rows | past retention | table + indexes MiB | dead tuples | reaper lag s | request p99 ms | not sent (over 64 in flight) |",
    );
    console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    console.log(rows.join("\n"));
    await engine.close();
    await db.$disconnect();
    await pool.end();
  } finally {
    await server.stop();
  }
});

async function sampleTable(pool: pg.Pool, engine: IdempotencyEngine<Tx>) {
  const [counts, size, stats, lag] = await Promise.all([
    pool.query<{ rows: number; expired: number }>(
      `SELECT count(*)::int AS "rows", count(*) FILTER (WHERE "expiresAt" <= now())::int AS "expired" FROM "IdempotencyKey"`,
    ),
    pool.query<{ bytes: string }>(
      `SELECT pg_total_relation_size('"IdempotencyKey"')::text AS "bytes"`,
    ),
    pool.query<{ dead: string }>(
      `SELECT n_dead_tup::text AS "dead" FROM pg_stat_user_tables WHERE relname = 'IdempotencyKey'`,
    ),
    engine.reaperLagSeconds(),
  ]);
  return {
    ...counts.rows[0]!,
    bytes: Number(size.rows[0]!.bytes),
    dead: Number(stats.rows[0]?.dead ?? 0),
    lag,
  };
}
