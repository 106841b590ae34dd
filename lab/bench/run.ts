// `npm run bench`: the engine's paths against a raw-pg floor doing the same work with hand-written
// SQL, in one process and one run (so figures are comparable as ratios, whatever the machine).
// Starts its own PostgreSQL; prints a Markdown table (the README shows the latest).
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { createDb } from "../../src/server/db/client";
import { createEngineFor } from "../../src/server/engine";
import { hashToken } from "../../src/server/auth/token";
import { createContextFor } from "../../src/server/api/context";
import { loadConfig } from "../../src/server/config";
import { makeTempDataDir, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { createIdempotencyEngine, withIdempotency } from "@once/idempotency";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../src/generated/prisma/client";
import type { Tx } from "../../src/server/db/client";
import { EFFECTS_TABLE_SQL, testRouter } from "./effect-router";
import { bursts, CountingPool, interleaved, sequential, table, type Row } from "./harness";
import { floorAuthenticate, floorIdempotent, floorRead, floorTransactionOnly } from "./floor";
import { duplicateGaps, duplicateTable, type Send } from "./duplicate-wait";
import { runBench, type Step } from "./fail";
import { compareWithBaseline, parseCompareArgs, type CompareOptions } from "./baseline/compare";
import { CheckoutError } from "./baseline/checkout";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const N_NEW = Math.round(1500 * SCALE);
const N_REPLAY = Math.round(3000 * SCALE);
const N_PATH = Math.round(2000 * SCALE);
const BURST_ROUNDS = 50;
const BURST_WIDTH = 32;
const POOL_MAX = 10;
/** The defaults, whatever the environment says, in demo mode (the demo tokens). */
const BENCH_CONFIG = loadConfig({ DEMO_MODE: "1" });
const DUPLICATE_ROUNDS = Math.max(4, Math.round(15 * SCALE));

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
  const server = await startEmbeddedPostgres({
    dataDir: await makeTempDataDir("once-bench-"),
    persistent: false,
  });
  try {
    await server.createDatabase("bench");
    const url = server.url("bench");
    await setupDatabase(url, () => {}, { demo: true });
    // Idle connections are kept (idleTimeoutMillis 0): a phase must not pay for the last one's
    // pause.
    const floorPool = new CountingPool({
      connectionString: url,
      max: POOL_MAX,
      idleTimeoutMillis: 0,
    });
    const enginePool = new CountingPool({
      connectionString: url,
      max: POOL_MAX,
      idleTimeoutMillis: 0,
    });
    const adopterPool = new CountingPool({
      connectionString: url,
      max: POOL_MAX,
      idleTimeoutMillis: 0,
    });
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

    const engineCall = (key: string, value: string, on = engine) =>
      withIdempotency(
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
    const floorCall = (key: string, value: string) =>
      floorIdempotent(floorPool, "bench", key, { value });
    const adopter = adopterSetup(adopterPool);

    const tokenHash = hashToken("acme_demo_token");
    // The whole tRPC path: HTTP request in, the app's context, the router, the engine `on`.
    const postEffect = async (
      on: typeof engine,
      headers: Record<string, string>,
      input: unknown,
    ): Promise<Response> => {
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
    const trpcCall = async (key: string, value: string, on = engine) => {
      const res = await postEffect(on, { "idempotency-key": key }, { value });
      if (res.status !== 200) throw new Error(`unexpected ${res.status}`);
    };
    const floorPathCall = async (key: string, value: string) => {
      const scope = await floorAuthenticate(floorPool, tokenHash);
      return floorIdempotent(floorPool, scope, key, { value });
    };

    // Warm both pools to their full size and both code paths, so no phase pays for start-up.
    const warm = async () => {
      await Promise.all(
        Array.from({ length: POOL_MAX * 3 }, (_, i) =>
          Promise.all([floorCall(randomUUID(), `w${i}`), engineCall(randomUUID(), `w${i}`)]),
        ),
      );
      for (let i = 0; i < 300; i++)
        await Promise.all([floorPathCall(randomUUID(), "w"), trpcCall(randomUUID(), "w")]);
    };
    await warm();
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

    const rows: Row[] = [];

    const SLICES = 10;
    const per = (n: number) => Math.max(1, Math.round(n / SLICES));

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
    rows.push({
      path: "new key (reserve, execute, complete)",
      ...newKey,
      goal: { metric: "p50", maxRatio: 1.3 },
    });

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
    rows.push({
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
    });

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
    rows.push({
      path: "replay of a completed key",
      ...replay,
      readFloor: replay.read,
      goal: { metric: "p50", maxRatio: 1.5 },
    });

    log(`replay from memory × ${N_REPLAY}`);
    await engineCall(engineDone, "replayed", cachedEngine); // read once from the store, then kept
    const memory = await interleaved(SLICES, {
      floor: () => sequential(floorPool, per(N_REPLAY), () => floorCall(floorDone, "replayed")),
      engine: () =>
        sequential(enginePool, per(N_REPLAY), () =>
          engineCall(engineDone, "replayed", cachedEngine),
        ),
    });
    rows.push({
      path: "replay of a completed key",
      engineLabel: "once engine, replay from memory",
      ...memory,
      goal: { metric: "p50", maxRatio: 0.5 },
    });

    log(`retry through the whole path (HTTP handler, auth, middleware) × ${N_PATH}`);
    const floorPathKey = randomUUID();
    const enginePathKey = randomUUID();
    await floorPathCall(floorPathKey, "path");
    await trpcCall(enginePathKey, "path");
    const path = await interleaved(SLICES, {
      floor: () => sequential(floorPool, per(N_PATH), () => floorPathCall(floorPathKey, "path")),
      engine: () => sequential(enginePool, per(N_PATH), () => trpcCall(enginePathKey, "path")),
    });
    rows.push({
      path: "retry through the whole path (auth + replay)",
      ...path,
      goal: { metric: "p50", maxRatio: 1.3 },
    });

    log(`retry through the whole path, replayed from memory × ${N_PATH}`);
    await trpcCall(enginePathKey, "path", cachedEngine);
    const pathMemory = await interleaved(SLICES, {
      floor: () => sequential(floorPool, per(N_PATH), () => floorPathCall(floorPathKey, "path")),
      engine: () =>
        sequential(enginePool, per(N_PATH), () => trpcCall(enginePathKey, "path", cachedEngine)),
    });
    rows.push({
      path: "retry through the whole path (auth + replay)",
      engineLabel: "once engine, replay from memory",
      ...pathMemory,
      goal: { metric: "p50", maxRatio: 1.3 },
    });

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
    rows.push({
      path: `duplicate burst (${BURST_WIDTH} × one key, ${BURST_ROUNDS} rounds)`,
      ...burst,
      goal: { metric: "p99", maxRatio: 1.5 },
    });

    log(`a concurrent duplicate, with and without Prefer: wait × ${DUPLICATE_ROUNDS}`);
    // Through the whole tRPC path on the engine that LISTENs (only it can be woken).
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
    const gaps = await duplicateGaps(send, held, DUPLICATE_ROUNDS);

    const [effects] = await db.$queryRaw<
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
    await cachedEngine.close();
    await adopter.close();
    await db.$disconnect();
    await floorPool.end();
    await enginePool.end();
    await adopterPool.end();
  } finally {
    await server.stop();
  }
});

/**
 * What an adopter has after the package's README: Prisma on `new PrismaPg(pool)` (its statements
 * not named), the engine on the same pool with every option at its default; beside it, the same
 * write without idempotency, and the usual hand-rolled pattern (create the key with Prisma, catch
 * P2002, run the transaction, mark the key done).
 */
function adopterSetup(pool: pg.Pool) {
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const engine = createIdempotencyEngine<Tx>({ prisma, pool });
  const insert = (tx: Tx, value: string) =>
    tx.$queryRaw<
      { id: number }[]
    >`INSERT INTO "TestEffect" ("scope", "value") VALUES ('bench', ${value}) RETURNING "id"`;
  // A completion shaped like the engine's (one key by its scope and id, the answer stored), through
  // Prisma; as the engine's, no status in the condition, so the primary key finds the row.
  const complete = (tx: Tx, id: string, answer: unknown) =>
    tx.$executeRawUnsafe(
      `UPDATE "IdempotencyKey" SET "status" = 'COMPLETED', "responseStatus" = 200, "responseBody" = $3, "completedAt" = now()
       WHERE "scope" = $1 AND "id" = $2::uuid`,
      "bench",
      id,
      JSON.stringify(answer),
    );
  return {
    engineCall: (key: string, value: string) =>
      withIdempotency(
        engine,
        { scope: "bench", key, operation: "effect", request: { value } },
        async (tx) => ({ effectId: (await insert(tx, value))[0]!.id, value }),
      ),
    prismaOnly: (value: string) => prisma.$transaction(async (tx) => insert(tx, value)),
    // The business write and one UPDATE shaped like the engine's completion (it matches no row):
    // what the completion alone costs through Prisma's raw statements inside the transaction.
    prismaPlusCompletion: (value: string) =>
      prisma.$transaction(async (tx) => {
        const [row] = await insert(tx, value);
        await complete(tx, randomUUID(), { effectId: row!.id, value });
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
        const [row] = await insert(tx, value);
        await complete(tx, reserved!.id, { effectId: row!.id, value });
      }),
    async createCatchP2002(key: string, value: string) {
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
        const [row] = await insert(tx, value);
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
    },
    close: () => engine.close().then(() => prisma.$disconnect()),
  };
}
