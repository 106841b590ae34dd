// One idempotency engine per database client (so per process in the app, per database in tests):
// its counters, cached live-key counts and replay cache live as long as the client.
import { createIdempotencyEngine, type EngineConfigInput, type IdempotencyEngine } from "@once/idempotency";
import pg from "pg";
import { directUrlOf, poolOf, preparesStatements, type Db, type Tx } from "./db/client";
import { appEngineConfig } from "./engine-config";

export type Engine = IdempotencyEngine<Tx>;

const engines = new WeakMap<Db, Engine>();

/** A new engine on `db` (tests pass their own configuration). */
export function createEngineFor(db: Db, config: EngineConfigInput = appEngineConfig()): Engine {
  const listenUrl = directUrlOf(db);
  return createIdempotencyEngine<Tx>({
    prisma: db,
    pool: poolOf(db),
    preparedStatements: preparesStatements(db),
    config,
    // LISTEN needs its own direct connection (not through a transaction-mode pooler): only the
    // app's process client has one; elsewhere every retry reads the database.
    listen: listenUrl ? () => new pg.Client({ connectionString: listenUrl }) : undefined,
  });
}

/** The engine of `db`, made on first use with the app's configuration. */
export function engineFor(db: Db): Engine {
  let engine = engines.get(db);
  if (!engine) engines.set(db, (engine = createEngineFor(db)));
  return engine;
}
