// `npm run bench`: the engine's paths against a raw-pg floor doing the same work with hand-written
// SQL, in one process and one run (so figures are comparable as ratios, whatever the machine).
// Starts its own PostgreSQL; prints a Markdown table (the README shows the latest).
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createDb, type Db } from "../../src/server/db/client";
import { createEngineFor, type Engine } from "../../src/server/engine";
import { hashToken } from "../../src/server/auth/token";
import { createContextFor } from "../../src/server/api/context";
import { loadConfig } from "../../src/server/config";
import { startThrowawayPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { createIdempotencyEngine, withIdempotency } from "@once/idempotency";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../src/generated/prisma/client";
import type { Tx } from "../../src/server/db/client";
import { EFFECTS_TABLE_SQL, testRouter } from "./effect-router";
import { bursts, CountingPool, interleaved, sequential, table, type Row } from "./harness";
import { floorAuthenticate, floorIdempotent, floorRead, floorTransactionOnly } from "./floor";
import { duplicateGaps, duplicateTable, type DuplicateGaps, type Send } from "./duplicate-wait";
import { runBench, type Step } from "./fail";
import { compareWithBaseline, parseCompareArgs, type CompareOptions } from "./baseline/compare";
import { CheckoutError } from "./baseline/checkout";
import { numberFlag } from "./flags";

const SCALE = numberFlag("scale", 1);
const N_NEW = Math.round(1500 * SCALE);
const N_REPLAY = Math.round(3000 * SCALE);
const N_PATH = Math.round(2000 * SCALE);
const BURST_ROUNDS = 50;
const BURST_WIDTH = 32;
const POOL_MAX = 10;
/** The defaults, whatever the environment says, in demo mode (the demo tokens). */
const BENCH_CONFIG = loadConfig({ DEMO_MODE: "1" });
const DUPLICATE_ROUNDS = Math.max(4, Math.round(15 * SCALE));
/**
 * Each phase runs its sides in turn, slice by slice: a drift in the machine's load (it is shared)
 * falls on every side alike.
 */
const SLICES = 10;
const per = (n: number) => Math.max(1, Math.round(n / SLICES));

/** Bad input (a missing value, a directory that is no usable checkout): one sentence, exit 2. */
function refuse(error: unknown): never {
  if (!(error instanceof CheckoutError)) throw error;
  console.error(`npm run bench: ${error.message}`);
  process.exit(2);
}

// `npm run bench -- --baseline DIR`: this build's engine against another checkout's, in one run
// (lab/bench/baseline/compare.ts), instead of the whole table.
let compare: CompareOptions | null = null;
try {
  compare = parseCompareArgs(process.argv.slice(2));
} catch (error) {
  refuse(error);
}
const compareOnly = (options: CompareOptions, log: Step) =>
  compareWithBaseline(options, log).catch(refuse);

await runBench("bench", async (log) => {
  if (compare) return compareOnly(compare, log);
  const server = await startThrowawayPostgres("once-bench-");
  try {
    await server.createDatabase("bench");
    const url = server.url("bench");
    await setupDatabase(url, () => {}, { demo: true });
    const rig = await openRig(url);
    await warmUp(rig);
    const rows: Row[] = [
      await newKeyRow(rig, log),
      await adoptedRow(rig, log),
      ...(await replayRows(rig, log)),
      ...(await wholePathRows(rig, log)),
      await burstRow(rig, log),
    ];
    const gaps = await concurrentDuplicateGaps(rig, log);
    await printReport(rig, rows, gaps);
    await closeRig(rig);
  } finally {
    await server.stop();
  }
});

type Rig = Awaited<ReturnType<typeof openRig>>;

/**
 * Everything the phases call: three pools (floor, our engine, the adopter's README setup) on one
 * database, our engine without and with its replay cache, and each side's call.
 */
async function openRig(url: string) {
  // Idle connections are kept (idleTimeoutMillis 0): a phase must not pay for the last one's
  // pause.
  const newPool = () =>
    new CountingPool({ connectionString: url, max: POOL_MAX, idleTimeoutMillis: 0 });
  const floorPool = newPool();
  const enginePool = newPool();
  const adopterPool = newPool();
  // The server stops at the end: its "terminating connection" notices are expected then.
  for (const pool of [floorPool, enginePool, adopterPool]) pool.on("error", () => {});
  const db = createDb(url, { pool: enginePool, preparedStatements: true });
  await db.$executeRawUnsafe(EFFECTS_TABLE_SQL);
  // The defaults, whatever the environment says; no replay cache: this measures the database
  // path.
  const engine = createEngineFor(db, {});
  // The same engine with a listener: finished answers are replayed from memory.
  const cachedEngine = createIdempotencyEngine<Tx>({
    prisma: db,
    pool: enginePool,
    listen: () => new pg.Client({ connectionString: url }),
  });
  await cachedEngine.ready;
  const tokenHash = hashToken("acme_demo_token");
  const postEffect = postEffectThrough(db);
  return {
    db,
    floorPool,
    enginePool,
    adopterPool,
    engine,
    cachedEngine,
    adopter: adopterSetup(adopterPool),
    postEffect,
    engineCall: (key: string, value: string, on = engine) => engineEffect(on, key, value),
    floorCall: (key: string, value: string) => floorIdempotent(floorPool, "bench", key, { value }),
    trpcCall: async (key: string, value: string, on = engine) => {
      const res = await postEffect(on, { "idempotency-key": key }, { value });
      if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
    },
    // The floor's whole path: the token's user, then the protocol by hand.
    floorPathCall: async (key: string, value: string) => {
      const scope = await floorAuthenticate(floorPool, tokenHash);
      return floorIdempotent(floorPool, scope, key, { value });
    },
  };
}

/** One effect through the engine, at the engine (no HTTP). */
function engineEffect(on: Engine, key: string, value: string) {
  return withIdempotency(
    on,
    { scope: "bench", key, operation: "effect", request: { value } },
    async (tx) => {
      const [row] = await tx.$queryRaw<
        { id: number }[]
      >`INSERT INTO "TestEffect" ("scope", "value") VALUES ('bench', ${value}) RETURNING "id"`;
      return { effectId: row!.id, value };
    },
  ).catch((error: { httpStatus?: number }) => {
    if (error.httpStatus === 409) return null; // an in-flight duplicate: part of the burst's answers
    throw error;
  });
}

/** The whole tRPC path: HTTP request in, the app's context, the router, the engine `on`. */
function postEffectThrough(db: Db) {
  return async (on: Engine, headers: Record<string, string>, input: unknown): Promise<Response> => {
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost/api/trpc/effect", {
        method: "POST",
        headers: {
          authorization: "Bearer acme_demo_token",
          "content-type": "application/json",
          ...headers,
        },
        body: JSON.stringify(input),
      }),
      router: testRouter,
      createContext: (opts) =>
        createContextFor(
          { db, engine: on, config: BENCH_CONFIG },
          opts.req.headers,
          opts.resHeaders,
          opts.info.calls.length,
        ),
    });
    await res.text();
    return res;
  };
}

/** Warm every pool to its full size and every code path, so no phase pays for start-up. */
async function warmUp(rig: Rig) {
  const { floorCall, engineCall, floorPathCall, trpcCall, adopter } = rig;
  await Promise.all(
    Array.from({ length: POOL_MAX * 3 }, (_, i) =>
      Promise.all([floorCall(randomUUID(), `w${i}`), engineCall(randomUUID(), `w${i}`)]),
    ),
  );
  for (let i = 0; i < 300; i++)
    await Promise.all([floorPathCall(randomUUID(), "w"), trpcCall(randomUUID(), "w")]);
  await Promise.all(
    Array.from({ length: POOL_MAX * 3 }, (_, i) =>
      Promise.all([
        adopter.engineCall(randomUUID(), `aw${i}`),
        adopter.createCatchP2002(randomUUID(), `acw${i}`),
        adopter.prismaOnly(`apw${i}`),
        adopter.prismaPlusCompletion(`a1w${i}`),
        adopter.reserveInsideTransaction(randomUUID(), `a2w${i}`),
      ]),
    ),
  );
}

/** A new key through our engine, against the floor, Prisma alone and the floor's variants. */
async function newKeyRow(rig: Rig, log: Step): Promise<Row> {
  const { floorPool, enginePool, db, floorCall, engineCall } = rig;
  log(`new key × ${N_NEW}`);
  const newKey = await interleaved(SLICES, {
    floor: (s) => sequential(floorPool, per(N_NEW), (i) => floorCall(randomUUID(), `n${s}-${i}`)),
    engine: (s) =>
      sequential(enginePool, per(N_NEW), (i) => engineCall(randomUUID(), `n${s}-${i}`)),
    prismaOnly: (s) =>
      sequential(enginePool, per(N_NEW), (i) =>
        db.$transaction(async (tx) => {
          const value = `p${s}-${i}`;
          await tx.$queryRaw`INSERT INTO "TestEffect" ("scope", "value") VALUES ('bench', ${value}) RETURNING "id"`;
        }),
      ),
    floorAsync: (s) =>
      sequential(floorPool, per(N_NEW), (i) =>
        floorIdempotent(floorPool, "bench", randomUUID(), { value: `fa${s}-${i}` }, "async"),
      ),
    floorTransactionOnly: (s) =>
      sequential(floorPool, per(N_NEW), (i) =>
        floorTransactionOnly(floorPool, "bench", `t${s}-${i}`),
      ),
  });
  return {
    path: "new key (reserve, execute, complete)",
    ...newKey,
    goal: { metric: "p50", maxRatio: 1.3 },
  };
}

/** A new key through the package as an adopter sets it up, against the usual hand-rolled ones. */
async function adoptedRow(rig: Rig, log: Step): Promise<Row> {
  const { floorPool, adopterPool, floorCall, adopter } = rig;
  log(`new key, the package as its README sets it up × ${N_NEW}`);
  const adopted = await interleaved(SLICES, {
    floor: (s) => sequential(floorPool, per(N_NEW), (i) => floorCall(randomUUID(), `a${s}-${i}`)),
    engine: (s) =>
      sequential(adopterPool, per(N_NEW), (i) => adopter.engineCall(randomUUID(), `a${s}-${i}`)),
    prismaOnly: (s) =>
      sequential(adopterPool, per(N_NEW), (i) => adopter.prismaOnly(`ap${s}-${i}`)),
    createCatch: (s) =>
      sequential(adopterPool, per(N_NEW), (i) =>
        adopter.createCatchP2002(randomUUID(), `ac${s}-${i}`),
      ),
    prismaPlusOne: (s) =>
      sequential(adopterPool, per(N_NEW), (i) => adopter.prismaPlusCompletion(`a1${s}-${i}`)),
    reserveInside: (s) =>
      sequential(adopterPool, per(N_NEW), (i) =>
        adopter.reserveInsideTransaction(randomUUID(), `a2${s}-${i}`),
      ),
  });
  return {
    path: "new key, the package as its README sets it up (defaults)",
    engineLabel: "@once/idempotency, README setup",
    floor: adopted.floor,
    engine: adopted.engine,
    prismaOnly: adopted.prismaOnly,
    alternatives: [
      {
        label:
          "Prisma `create` of the key + catch `P2002`, then the transaction (the usual pattern)",
        sample: adopted.createCatch,
      },
      {
        label:
          "Prisma transaction + one raw statement, the completion's shape (no reservation): the least an engine that completes through Prisma can add",
        sample: adopted.prismaPlusOne,
      },
      {
        label:
          "Prisma transaction with the key's insert and its completion inside it (an in-transaction mode's happy path, no replay or refusal logic)",
        sample: adopted.reserveInside,
      },
    ],
    goal: { metric: "p50", maxRatio: 1.3 },
  };
}

/** `n` sequential calls of the floor's and of the engine's, interleaved in SLICES slices. */
function floorVersusEngine(
  rig: Rig,
  n: number,
  floor: () => Promise<unknown>,
  engine: () => Promise<unknown>,
) {
  return interleaved(SLICES, {
    floor: () => sequential(rig.floorPool, per(n), floor),
    engine: () => sequential(rig.enginePool, per(n), engine),
  });
}

/**
 * The replay of a completed key: from the store (against the floor and one bare read), then from
 * memory.
 */
async function replayRows(rig: Rig, log: Step): Promise<Row[]> {
  const { floorPool, enginePool, floorCall, engineCall, cachedEngine } = rig;
  log(`replay × ${N_REPLAY}`);
  const floorDone = randomUUID();
  const engineDone = randomUUID();
  await floorCall(floorDone, "replayed");
  await engineCall(engineDone, "replayed");
  const replay = await interleaved(SLICES, {
    floor: () => sequential(floorPool, per(N_REPLAY), () => floorCall(floorDone, "replayed")),
    engine: () => sequential(enginePool, per(N_REPLAY), () => engineCall(engineDone, "replayed")),
    read: () =>
      sequential(floorPool, per(N_REPLAY), () => floorRead(floorPool, "bench", floorDone)),
  });
  log(`replay from memory × ${N_REPLAY}`);
  await engineCall(engineDone, "replayed", cachedEngine); // read once from the store, then kept
  const memory = await floorVersusEngine(
    rig,
    N_REPLAY,
    () => floorCall(floorDone, "replayed"),
    () => engineCall(engineDone, "replayed", cachedEngine),
  );
  return [
    {
      path: "replay of a completed key",
      ...replay,
      readFloor: replay.read,
      goal: { metric: "p50", maxRatio: 1.5 },
    },
    {
      path: "replay of a completed key",
      engineLabel: "once engine, replay from memory",
      ...memory,
      goal: { metric: "p50", maxRatio: 0.5 },
    },
  ];
}

/** A retry through the whole path (HTTP handler, auth, middleware): from the store, then memory. */
async function wholePathRows(rig: Rig, log: Step): Promise<Row[]> {
  const { floorPathCall, trpcCall, cachedEngine } = rig;
  log(`retry through the whole path (HTTP handler, auth, middleware) × ${N_PATH}`);
  const floorPathKey = randomUUID();
  const enginePathKey = randomUUID();
  await floorPathCall(floorPathKey, "path");
  await trpcCall(enginePathKey, "path");
  const floorPath = () => floorPathCall(floorPathKey, "path");
  const path = await floorVersusEngine(rig, N_PATH, floorPath, () =>
    trpcCall(enginePathKey, "path"),
  );
  log(`retry through the whole path, replayed from memory × ${N_PATH}`);
  await trpcCall(enginePathKey, "path", cachedEngine);
  const pathMemory = await floorVersusEngine(rig, N_PATH, floorPath, () =>
    trpcCall(enginePathKey, "path", cachedEngine),
  );
  return [
    {
      path: "retry through the whole path (auth + replay)",
      ...path,
      goal: { metric: "p50", maxRatio: 1.3 },
    },
    {
      path: "retry through the whole path (auth + replay)",
      engineLabel: "once engine, replay from memory",
      ...pathMemory,
      goal: { metric: "p50", maxRatio: 1.3 },
    },
  ];
}

/** BURST_WIDTH concurrent calls with one key, BURST_ROUNDS rounds, a fresh key per round. */
async function burstRow(rig: Rig, log: Step): Promise<Row> {
  const { floorPool, enginePool, floorCall, engineCall } = rig;
  log(`duplicate burst: ${BURST_WIDTH} concurrent × ${BURST_ROUNDS} rounds`);
  const floorKeys = Array.from({ length: BURST_ROUNDS }, () => randomUUID());
  const engineKeys = Array.from({ length: BURST_ROUNDS }, () => randomUUID());
  const burstSlices = 5;
  const roundsPer = BURST_ROUNDS / burstSlices;
  const burst = await interleaved(burstSlices, {
    floor: (s) =>
      bursts(floorPool, roundsPer, BURST_WIDTH, (r) =>
        floorCall(floorKeys[s * roundsPer + r]!, `bf${s * roundsPer + r}`),
      ),
    engine: (s) =>
      bursts(enginePool, roundsPer, BURST_WIDTH, (r) =>
        engineCall(engineKeys[s * roundsPer + r]!, `be${s * roundsPer + r}`),
      ),
  });
  return {
    path: `duplicate burst (${BURST_WIDTH} × one key, ${BURST_ROUNDS} rounds)`,
    ...burst,
    goal: { metric: "p99", maxRatio: 1.5 },
  };
}

/**
 * A concurrent duplicate with and without Prefer: wait, through the whole tRPC path on the engine
 * that LISTENs (only it can be woken).
 */
async function concurrentDuplicateGaps(rig: Rig, log: Step) {
  const { floorPool, postEffect, cachedEngine } = rig;
  log(`a concurrent duplicate, with and without Prefer: wait × ${DUPLICATE_ROUNDS}`);
  const send: Send = async (key, input, prefer) => {
    const res = await postEffect(
      cachedEngine,
      { "idempotency-key": key, ...(prefer ? { prefer } : {}) },
      input,
    );
    const retryAfter = res.headers.get("retry-after");
    return {
      status: res.status,
      retryAfterSeconds: retryAfter ? Number(retryAfter) : undefined,
      preferenceApplied: res.headers.get("preference-applied"),
    };
  };
  const held = async (key: string) =>
    (
      await floorPool.query(
        `SELECT 1 FROM "IdempotencyKey" WHERE "scope" = 'acme' AND "key" = $1`,
        [key],
      )
    ).rowCount === 1;
  return duplicateGaps(send, held, DUPLICATE_ROUNDS);
}

/** The tables, and the burst check: one effect per burst key, on either side. */
async function printReport(rig: Rig, rows: Row[], gaps: DuplicateGaps) {
  const [effects] = await rig.db.$queryRaw<
    { n: number }[]
  >`SELECT count(DISTINCT "value")::int AS "n" FROM "TestEffect" WHERE "value" LIKE 'b%'`;
  console.log(
    `\nonce bench — ${new Date().toISOString()} — node ${process.version}, PostgreSQL embedded, pool ${POOL_MAX} per side, statements prepared on both sides\n`,
  );
  console.log(table(rows));
  console.log(`\n${duplicateTable(gaps)}`);
  console.log(
    `\nburst check: ${effects!.n} distinct effects for ${BURST_ROUNDS * 2} burst keys (expected ${BURST_ROUNDS * 2})`,
  );
}

async function closeRig(rig: Rig) {
  await rig.cachedEngine.close();
  await rig.adopter.close();
  await rig.db.$disconnect();
  await rig.floorPool.end();
  await rig.enginePool.end();
  await rig.adopterPool.end();
}

function insertEffect(tx: Tx, value: string) {
  return tx.$queryRaw<
    { id: number }[]
  >`INSERT INTO "TestEffect" ("scope", "value") VALUES ('bench', ${value}) RETURNING "id"`;
}

/**
 * A completion shaped like the engine's (one key by its scope and id, the answer stored), through
 * Prisma; as the engine's, no status in the condition, so the primary key finds the row.
 */
function completeLikeEngine(tx: Tx, id: string, answer: unknown) {
  return tx.$executeRawUnsafe(
    `UPDATE "IdempotencyKey" SET "status" = 'COMPLETED', "responseStatus" = 200, "responseBody" = $3, "completedAt" = now()
       WHERE "scope" = $1 AND "id" = $2::uuid`,
    "bench",
    id,
    JSON.stringify(answer),
  );
}

/**
 * What an adopter has after the package's README: Prisma on `new PrismaPg(pool)` (its statements
 * not named), the engine on the same pool with every option at its default; beside it, the same
 * write without idempotency, and the usual hand-rolled pattern (create the key with Prisma, catch
 * P2002, run the transaction, mark the key done).
 */
function adopterSetup(pool: pg.Pool) {
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const engine = createIdempotencyEngine<Tx>({ prisma, pool });
  return {
    engineCall: (key: string, value: string) =>
      withIdempotency(
        engine,
        { scope: "bench", key, operation: "effect", request: { value } },
        async (tx) => ({ effectId: (await insertEffect(tx, value))[0]!.id, value }),
      ),
    prismaOnly: (value: string) => prisma.$transaction(async (tx) => insertEffect(tx, value)),
    // The business write and one UPDATE shaped like the engine's completion (it matches no row):
    // what the completion alone costs through Prisma's raw statements inside the transaction.
    prismaPlusCompletion: (value: string) =>
      prisma.$transaction(async (tx) => {
        const [row] = await insertEffect(tx, value);
        await completeLikeEngine(tx, randomUUID(), { effectId: row!.id, value });
      }),
    // The reservation moved into the business transaction (one commit, no lease to sweep): the
    // key's insert, the write, the completion, all through Prisma inside one transaction.
    reserveInsideTransaction: (key: string, value: string) =>
      prisma.$transaction(async (tx) => {
        const [reserved] = await tx.$queryRawUnsafe<{ id: string }[]>(
          `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "expiresAt")
           VALUES ('bench', $1, 'effect', $2, 'PROCESSING', now() + interval '1 day')
           ON CONFLICT ("scope", "key") DO NOTHING RETURNING "id"`,
          key,
          "0".repeat(64),
        );
        const [row] = await insertEffect(tx, value);
        await completeLikeEngine(tx, reserved!.id, { effectId: row!.id, value });
      }),
    createCatchP2002: (key: string, value: string) => createCatchP2002(prisma, key, value),
    close: () => engine.close().then(() => prisma.$disconnect()),
  };
}

/**
 * The usual hand-rolled pattern: create the key, catch P2002 (read it), else write and mark it
 * done.
 */
async function createCatchP2002(prisma: PrismaClient, key: string, value: string) {
  try {
    await prisma.idempotencyKey.create({
      data: {
        scope: "bench",
        key,
        procedure: "effect",
        fingerprint: "0".repeat(64),
        status: "PROCESSING",
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      return prisma.idempotencyKey.findUnique({
        where: { scope_key: { scope: "bench", key } },
      });
    throw error;
  }
  return prisma.$transaction(async (tx) => {
    const [row] = await insertEffect(tx, value);
    const body = JSON.stringify({ effectId: row!.id, value });
    return tx.idempotencyKey.update({
      where: { scope_key: { scope: "bench", key } },
      data: {
        status: "COMPLETED",
        responseStatus: 200,
        responseBody: body,
        completedAt: new Date(),
      },
    });
  });
}
