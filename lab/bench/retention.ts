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
import { startThrowawayPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { percentile } from "../../tools/stats";
import { runBench, type Step } from "./fail";
import { numberFlag } from "./flags";

const RETENTION_SECONDS = numberFlag("retention-seconds", 20);
/**
 * The reaper's interval when caught up, scaled down with the retention (production: 60 s against 24
 * h).
 */
const REAPER_INTERVAL_MS = 5_000;
const WITH_REAPER_SECONDS = numberFlag("with-reaper-seconds", 180);
const WITHOUT_REAPER_SECONDS = numberFlag("without-reaper-seconds", 60);
const CALIBRATE_SECONDS = 10;
const SAMPLE_EVERY_MS = 10_000;
const POOL_MAX = 10;
/** Requests in flight at most; past it a tick's requests are not sent (counted as dropped). */
const MAX_IN_FLIGHT = 64;
/** The paced rate, as a share of the closed-loop rate measured first: headroom for the reaper. */
const RATE_SHARE = numberFlag("rate-share", 0.6);
const TENANTS = 8;

/**
 * New keys through the engine, and what the samples read: keys done, latencies since the last
 * sample, requests in flight and those not sent. Shared by calibration and both phases, so the
 * first sample's window also holds the calibration's latencies, as it always has.
 */
class KeyLoad {
  readonly latencies: number[] = [];
  done = 0;
  inFlight = 0;
  dropped = 0;

  constructor(private readonly engine: IdempotencyEngine<Tx>) {}

  async newKey(): Promise<void> {
    const started = performance.now();
    const scope = `tenant-${Math.floor(Math.random() * TENANTS)}`;
    await withIdempotency(
      this.engine,
      { scope, key: randomUUID(), operation: "retention.probe", request: { n: this.done } },
      async () => ({ ok: true }),
    );
    this.latencies.push(performance.now() - started);
    this.done++;
  }
}

await runBench("bench:retention", async (step) => {
  step("start PostgreSQL");
  const server = await startThrowawayPostgres("once-bench-retention-");
  try {
    await server.createDatabase("retention");
    const url = server.url("retention");
    await setupDatabase(url, () => {}, { demo: true });
    const { pool, db, engine } = openEngine(url);
    const load = new KeyLoad(engine);
    step(`calibrate: ${CALIBRATE_SECONDS} s closed loop, ${MAX_IN_FLIGHT / 4} concurrent`);
    const { closedLoopRate, rate } = await calibrate(load);
    await pool.query(`TRUNCATE "IdempotencyKey"`);
    const rows = await runPhases(step, pool, engine, load, rate);
    printReport(rows, closedLoopRate, rate);
    await engine.close();
    await db.$disconnect();
    await pool.end();
  } finally {
    await server.stop();
  }
});

/** The engine on its own pool, with the short retention and the scaled-down reaper interval. */
function openEngine(url: string) {
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
  return { pool, db, engine };
}

/** The closed-loop rate, and the paced rate as a share of it (headroom for the reaper). */
async function calibrate(load: KeyLoad) {
  const calibrateUntil = Date.now() + CALIBRATE_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: MAX_IN_FLIGHT / 4 }, async () => {
      while (Date.now() < calibrateUntil) await load.newKey();
    }),
  );
  const closedLoopRate = load.done / CALIBRATE_SECONDS;
  const rate = Math.floor(closedLoopRate * RATE_SHARE);
  process.stderr.write(
    `[bench:retention] closed loop ${closedLoopRate.toFixed(0)} keys/s; pacing at ${rate}/s\n`,
  );
  return { closedLoopRate, rate };
}

/** Phase 1 with the engine's jobs (the reaper), phase 2 without (the control); the table's rows. */
async function runPhases(
  step: Step,
  pool: pg.Pool,
  engine: IdempotencyEngine<Tx>,
  load: KeyLoad,
  rate: number,
): Promise<string[]> {
  const rows: string[] = [];
  const started = Date.now();
  let lastDone = load.done;
  const sample = async (phase: string) => {
    const s = await sampleTable(pool, engine);
    const window = load.latencies.splice(0).sort((a, b) => a - b);
    const achieved = (load.done - lastDone) / (SAMPLE_EVERY_MS / 1000);
    lastDone = load.done;
    const row = `| ${Math.round((Date.now() - started) / 1000)} | ${phase} | ${achieved.toFixed(0)} | ${s.rows} | ${s.expired} | ${(s.bytes / 2 ** 20).toFixed(1)} | ${s.dead} | ${s.lag.toFixed(0)} | ${percentile(window, 99).toFixed(1)} | ${load.dropped} |`;
    rows.push(row);
    process.stderr.write(`${row}\n`);
  };
  step(
    `phase 1: ${WITH_REAPER_SECONDS} s at ${rate} keys/s, retention ${RETENTION_SECONDS} s, reaper every ${REAPER_INTERVAL_MS / 1000} s`,
  );
  const stopJobs = engine.startJobs((job, error) =>
    process.stderr.write(`[${job}] ${error.message}\n`),
  );
  await pace(load, rate, WITH_REAPER_SECONDS, () => void sample("reaper on"));
  await stopJobs();
  step(`phase 2 (control): ${WITHOUT_REAPER_SECONDS} s at the same rate, no reaper`);
  await pace(load, rate, WITHOUT_REAPER_SECONDS, () => void sample("reaper off"));
  while (load.inFlight > 0) await sleep(10);
  return rows;
}

/** Sends new keys at `rate` for `seconds`, never more than MAX_IN_FLIGHT at once, sampling. */
async function pace(load: KeyLoad, rate: number, seconds: number, sample: () => void) {
  const until = Date.now() + seconds * 1000;
  let last = performance.now();
  let owed = 0;
  const sampler = setInterval(sample, SAMPLE_EVERY_MS);
  while (Date.now() < until) {
    // Owed by the clock, not per tick: a late timer must not lower the rate.
    const now = performance.now();
    owed += (rate * (now - last)) / 1000;
    last = now;
    for (; owed >= 1; owed--) {
      if (load.inFlight >= MAX_IN_FLIGHT) {
        load.dropped++;
        continue;
      }
      load.inFlight++;
      void load.newKey().finally(() => load.inFlight--);
    }
    await sleep(10);
  }
  clearInterval(sampler);
}

function printReport(rows: string[], closedLoopRate: number, rate: number) {
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
}

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
