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
 * What a client made by createDb carries about its connections. Kept on the client itself under a
 * global symbol, not in a module's table: a bundler may copy this module once per route, and every
 * copy must find the pool of a client another copy made.
 */
interface Connections {
  pool: pg.Pool;
  prepared: boolean;
}
const CONNECTIONS = Symbol.for("once.db.connections");
type WithConnections = Db & { [CONNECTIONS]?: Connections };

/**
 * A pg client that is never without an `error` listener. pg-pool listens on its clients only at
 * some moments (idle, inside pool.query); a connection that PostgreSQL terminates at any other
 * moment (57P01 when the postmaster dies mid-transaction, a proxy that drops it) would emit `error`
 * to nobody, which Node turns into an uncaught exception: a crash. The query in progress still
 * fails on its own, and the pool discards the client when it is released.
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
    /**
     * Prepare statements (Prisma's and the engine's): PostgreSQL parses and plans each once per
     * connection. On by default (a direct connection); the app passes its configuration's choice,
     * false for a connection string that goes through PgBouncer before 1.21.
     */
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
      // Fail fast when PostgreSQL is unreachable: the engine answers 503 instead of hanging. A
      // wait that runs out while PostgreSQL answers on other connections is busy
      // (bounded-pool.ts).
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
 * The pg pool under a client made by createDb. The idempotency engine sends its statements that
 * run outside a business transaction straight to it: same connections, without Prisma's
 * per-statement cost (see packages/idempotency/src/store/postgres.ts).
 */
export function poolOf(db: Db): pg.Pool | undefined {
  return (db as WithConnections)[CONNECTIONS]?.pool;
}

/** Whether this client prepares its statements (the engine's store then prepares its own too). */
export function preparesStatements(db: Db): boolean {
  return (db as WithConnections)[CONNECTIONS]?.prepared ?? false;
}

/**
 * The rows of a read sent straight to the pg pool under a client made by createDb, for a hot read
 * whose cost would be mostly Prisma's per-statement CPU (npm run bench:http, route costs): prepared
 * under `name` (planned once per connection) when the client prepares. Undefined when the client
 * has no pool of ours (another adapter): the caller asks Prisma instead.
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
