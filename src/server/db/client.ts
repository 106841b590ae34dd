// The Prisma client. Handlers never import this: they get `ctx.db` (or the idempotency
// transaction), so their writes commit together with the key's completion. The composition root
// (src/server/app.ts) makes the process's one client; tests and tools make their own.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { BoundedPool } from "./bounded-pool";
import { statementNames } from "./statement-names";
import { PrismaClient, type Prisma } from "../../generated/prisma/client";

export type Db = PrismaClient;
/** A Prisma interactive transaction: what handlers write through (`ctx.tx`). */
export type Tx = Prisma.TransactionClient;

/** Pool size per process: two cores here; a few connections per core keep PostgreSQL busy. */
export const POOL_MAX = 10;
/**
 * How long a query may wait for a pool connection before it is refused as busy: a request's wait
 * for the store, which the HTTP admission also sizes its bound by (src/server/edge/admission.ts).
 */
export const STORE_WAIT_MS = 2_000;

/**
 * What a client made by createDb carries about its connections, on the client under a global
 * symbol: a bundler may copy this module once per route, and every copy must find the pool.
 */
type Connections = { pool: pg.Pool; prepared: boolean };
const CONNECTIONS = Symbol.for("once.db.connections");
type WithConnections = Db & { [CONNECTIONS]?: Connections };

/**
 * A pg client never without an `error` listener: pg-pool listens only at some moments, and a
 * connection terminated at another (57P01, a proxy dropping it) would emit `error` to nobody, which
 * crashes Node. The query in progress still fails, and the pool discards the client on release.
 */
export class ListenedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("error", () => {});
  }
}

export function createDb(
  connectionString: string,
  options: {
    max?: number;
    /** How long a query may wait for a connection before it fails (busy): 2 s unless told. */
    connectTimeoutMs?: number;
    /** bring your own (benchmarks) */ pool?: pg.Pool;
    /** Prepare statements, planned once per connection: off behind PgBouncer before 1.21. */
    preparedStatements?: boolean;
  } = {},
): Db {
  const prepare = options.preparedStatements ?? true;
  const pool =
    options.pool ??
    new BoundedPool({
      connectionString,
      max: options.max ?? POOL_MAX,
      Client: ListenedClient,
      // Fail fast when PostgreSQL is unreachable (503, not a hang); a wait that runs out while
      // PostgreSQL answers on other connections is busy (bounded-pool.ts).
      connectionTimeoutMillis: options.connectTimeoutMs ?? STORE_WAIT_MS,
    });
  // An idle connection that dies (PostgreSQL restarted) is dropped by the pool; the next query
  // opens a new one. Without a listener the error would crash the process.
  pool.on("error", () => {});
  const db = new PrismaClient({
    adapter: new PrismaPg(pool, prepare ? { statementNameGenerator: statementNames() } : {}),
  }) as WithConnections;
  Object.defineProperty(db, CONNECTIONS, {
    value: { pool, prepared: prepare } satisfies Connections,
  });
  if (!options.pool) {
    // The adapter does not end a pool it was given; a client that owns its pool closes it with
    // $disconnect, as it would have closed a pool the adapter made itself.
    const disconnect = db.$disconnect.bind(db);
    db.$disconnect = async () => {
      await disconnect();
      if (!pool.ended) await pool.end();
    };
  }
  return db;
}

/**
 * The pg pool under a client made by createDb: the engine's statements outside a transaction go
 * straight to it, without Prisma's per-statement cost.
 */
export function poolOf(db: Db): pg.Pool | undefined {
  return (db as WithConnections)[CONNECTIONS]?.pool;
}

/** Whether this client prepares its statements (the engine's store then prepares its own too). */
export function preparesStatements(db: Db): boolean {
  return (db as WithConnections)[CONNECTIONS]?.prepared ?? false;
}

/**
 * A hot read sent straight to the pool (its cost would be mostly Prisma's per-statement CPU: npm
 * run bench:http), prepared under `name` when the client prepares. Undefined without a pool of
 * ours (another adapter): the caller asks Prisma instead.
 */
export async function readOnPool<T extends pg.QueryResultRow>(
  db: Db,
  name: string,
  text: string,
  values: unknown[] = [],
): Promise<T[] | undefined> {
  const pool = poolOf(db);
  if (!pool) return undefined;
  const prepared = preparesStatements(db) ? name : undefined;
  return (await pool.query<T>({ name: prepared, text, values })).rows;
}
