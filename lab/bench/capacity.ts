// `npm run bench:capacity`: how many new keys a second the key store takes, at the engine (no
// HTTP): reserve, a one-row business write, the fenced completion. Closed loop, CONCURRENCY
// requests in flight per implementation, in interleaved slices, against:
//   - the raw-SQL floor (lab/bench/floor.ts), the same protocol written by hand on a bare pg pool;
//   - the engine as configured by default (Prefer: wait on; a settle NOTIFYs only when a waiter
//     marked its key, and nothing waits here);
//   - the engine with maxWaitMs 0 (no waits, no NOTIFY);
//   - the engine on the key table hash-partitioned by scope (8 partitions), in a scratch database.
// For each: keys/s, PostgreSQL's CPU per key (all backends, from /proc), so keys per second per
// PostgreSQL core; then the partitioned table's index size and the reaper's cost on both tables.
// A measurement to cite, not a test.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import {
  createIdempotencyEngine,
  withIdempotency,
  type IdempotencyEngine,
} from "@once/idempotency";
import { reapExpiredKeys } from "@once/idempotency/jobs";
import { poolRunner } from "@once/idempotency/sql";
import { createDb, type Db, type Tx } from "../../src/server/db/client";
import { startThrowawayPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { EFFECTS_TABLE_SQL } from "./effect-router";
import { runBench, type Step } from "./fail";
import { floorIdempotent } from "./floor";
import { CountingPool } from "./harness";
import { treeCpuMs } from "./http/cpu";
import { PARTITIONED_SQL, PARTITIONS, tableBytes } from "./partitioned";
import { numberFlag } from "./flags";

const CONCURRENCY = numberFlag("concurrency", 16);
const SLICES = numberFlag("slices", 4);
const SLICE_SECONDS = numberFlag("slice-seconds", 5);
const POOL_MAX = 10;
const TENANTS = 8;
const REAP_ROWS = 50_000;

interface Tally {
  keys: number;
  ms: number;
  pgCpuMs: number;
}

type Connection = ReturnType<typeof connect>;
type Implementation = (scope: string) => Promise<unknown>;

await runBench("bench:capacity", async (step) => {
  step("start PostgreSQL");
  const server = await startThrowawayPostgres("once-bench-capacity-");
  try {
    const { plain, part } = await prepareDatabases(server);
    const postmaster = await postmasterPid(plain.pool);
    const tallies = await measureSlices(step, implementations(plain, part), postmaster);
    step("index size and the reaper's cost, plain and partitioned");
    const sizes = {
      plain: await tableBytes(plain.pool, false),
      partitioned: await tableBytes(part.pool, true),
    };
    const reap = {
      plain: await reapCost(plain.pool, postmaster),
      partitioned: await reapCost(part.pool, postmaster),
    };
    printThroughput(tallies);
    printStorage(sizes, reap);
    for (const c of [plain, part]) {
      await c.db.$disconnect();
      await c.floorPool.end();
    }
  } finally {
    await server.stop();
  }
});

/** Two databases with the same schema: the key table as shipped, and hash-partitioned by scope. */
async function prepareDatabases(server: Awaited<ReturnType<typeof startThrowawayPostgres>>) {
  for (const name of ["plain", "partitioned"]) {
    await server.createDatabase(name);
    await setupDatabase(server.url(name), () => {}, { demo: true });
  }
  const plain = connect(server.url("plain"));
  const part = connect(server.url("partitioned"));
  await plain.pool.query(EFFECTS_TABLE_SQL);
  await part.pool.query(EFFECTS_TABLE_SQL);
  await part.pool.query(PARTITIONED_SQL);
  return { plain, part };
}

/** One new key through the engine: reserve, the one-row business write, the fenced completion. */
function engineCall(on: IdempotencyEngine<Tx>): Implementation {
  return (scope) =>
    withIdempotency(
      on,
      { scope, key: randomUUID(), operation: "effect", request: { value: "v" } },
      async (tx) => {
        const [row] = await tx.$queryRaw<
          { id: number }[]
        >`INSERT INTO "TestEffect" ("scope", "value") VALUES (${scope}, 'v') RETURNING "id"`;
        return { effectId: row!.id };
      },
    );
}

/** The floor and the three engine configurations, by the name each row of the table prints. */
function implementations(plain: Connection, part: Connection): Record<string, Implementation> {
  const engine = (db: Db, pool: CountingPool, maxWaitMs?: number) =>
    createIdempotencyEngine<Tx>({
      prisma: db,
      pool,
      preparedStatements: true,
      config: { maxWaitMs, replayCacheSize: 0 },
    });
  return {
    "raw-SQL floor": (scope) =>
      floorIdempotent(plain.floorPool, scope, randomUUID(), { value: "v" }),
    "engine (default: NOTIFY only for an awaited key)": engineCall(engine(plain.db, plain.pool)),
    "engine, maxWaitMs 0 (no NOTIFY)": engineCall(engine(plain.db, plain.pool, 0)),
    [`engine, key table hash-partitioned by scope (${PARTITIONS})`]: engineCall(
      engine(part.db, part.pool),
    ),
  };
}

/**
 * Each path warmed once, then SLICES rounds of every implementation in turn: interleaved, so a
 * drift in the machine's load (it is shared) falls on all of them alike.
 */
async function measureSlices(
  step: Step,
  impls: Record<string, Implementation>,
  postmaster: number,
): Promise<Map<string, Tally>> {
  const tallies = new Map<string, Tally>(
    Object.keys(impls).map((name) => [name, { keys: 0, ms: 0, pgCpuMs: 0 }]),
  );
  for (const call of Object.values(impls)) await closedLoop(call, 1); // warm each path
  for (let slice = 0; slice < SLICES; slice++) {
    for (const [name, call] of Object.entries(impls)) {
      step(`slice ${slice + 1}/${SLICES}: ${name}`);
      const cpu0 = treeCpuMs(postmaster);
      const t0 = performance.now();
      const keys = await closedLoop(call, SLICE_SECONDS);
      const tally = tallies.get(name)!;
      tally.keys += keys;
      tally.ms += performance.now() - t0;
      tally.pgCpuMs += treeCpuMs(postmaster) - cpu0;
    }
  }
  return tallies;
}

function printThroughput(tallies: Map<string, Tally>) {
  const floor = tallies.get("raw-SQL floor")!;
  const rate = (t: Tally) => (t.keys / t.ms) * 1000;
  console.log(
    `\nonce bench:capacity — ${new Date().toISOString()} — node ${process.version}, PostgreSQL embedded (one server, client and server on the same 2 cores), ` +
      `${CONCURRENCY} in flight, pool ${POOL_MAX}, ${SLICES} interleaved slices × ${SLICE_SECONDS} s\n`,
  );
  console.log(
    "| new keys (reserve + one-row write + completion) | keys/s | to the floor | PostgreSQL CPU ms per key | keys/s per PostgreSQL core |",
  );
  console.log("|---|---:|---:|---:|---:|");
  for (const [name, t] of tallies) {
    const cpuPerKey = t.pgCpuMs / t.keys;
    console.log(
      `| ${name} | ${rate(t).toFixed(0)} | ${(rate(t) / rate(floor)).toFixed(2)} | ${cpuPerKey.toFixed(3)} | ${(1000 / cpuPerKey).toFixed(0)} |`,
    );
  }
}

type TableSizes = Awaited<ReturnType<typeof tableBytes>>;
type ReapCost = Awaited<ReturnType<typeof reapCost>>;

function printStorage(
  sizes: Record<"plain" | "partitioned", TableSizes>,
  reap: Record<"plain" | "partitioned", ReapCost>,
) {
  console.log(
    `\n| key table | rows | table MiB | indexes MiB | index bytes per row | reaper: ${REAP_ROWS} expired keys, ms | PostgreSQL CPU ms per 1 000 reaped |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const which of ["plain", "partitioned"] as const) {
    const s = sizes[which];
    const r = reap[which];
    console.log(
      `| ${which} | ${s.rows} | ${(s.tableBytes / 2 ** 20).toFixed(1)} | ${(s.indexBytes / 2 ** 20).toFixed(1)} | ${(s.indexBytes / s.rows).toFixed(0)} | ${r.ms.toFixed(0)} | ${((r.cpuMs / REAP_ROWS) * 1000).toFixed(0)} |`,
    );
  }
}

function connect(url: string) {
  const pool = new CountingPool({ connectionString: url, max: POOL_MAX, idleTimeoutMillis: 0 });
  const floorPool = new CountingPool({
    connectionString: url,
    max: POOL_MAX,
    idleTimeoutMillis: 0,
  });
  for (const p of [pool, floorPool]) p.on("error", () => {});
  return { pool, floorPool, db: createDb(url, { pool, preparedStatements: true }) };
}

/** CONCURRENCY workers, each sending its next request as soon as its last is answered. */
async function closedLoop(
  call: (scope: string) => Promise<unknown>,
  seconds: number,
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let keys = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      while (performance.now() < until) {
        await call(`tenant-${(w + keys) % TENANTS}`);
        keys++;
      }
    }),
  );
  return keys;
}

/** The postmaster: the parent of this connection's backend (its CPU tree holds every backend's). */
async function postmasterPid(pool: CountingPool): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const stat = readFileSync(`/proc/${rows[0]!.pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Plants REAP_ROWS expired keys (set-based) and times one reaper round that deletes them all. */
async function reapCost(pool: CountingPool, postmaster: number) {
  await pool.query(
    `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "expiresAt")
     SELECT 'tenant-' || (g % ${TENANTS}), 'reap-' || g, 'effect', repeat('0', 64), 'COMPLETED', now() - interval '1 minute'
     FROM generate_series(1, ${REAP_ROWS}) AS g`,
  );
  await pool.query(`VACUUM ANALYZE "IdempotencyKey"`);
  const cpu0 = treeCpuMs(postmaster);
  const t0 = performance.now();
  const result = await reapExpiredKeys(poolRunner(pool), { budgetMs: 600_000, pauseMs: 0 });
  if (result.deleted !== REAP_ROWS)
    throw new Error(`the reaper deleted ${result.deleted} of ${REAP_ROWS}`);
  return { ms: performance.now() - t0, cpuMs: treeCpuMs(postmaster) - cpu0 };
}
