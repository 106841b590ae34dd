// One engine per database client (so per process in the app, per database in tests): its
// counters and cached live-key counts live as long as the client.
import type { Db } from "./db/client";
import { getDb, poolOf } from "./db/client";
import { createEngine, engineConfigFromEnv, type Engine } from "./idempotency";

const engines = new WeakMap<Db, Engine>();

export function engineFor(db: Db): Engine {
  let engine = engines.get(db);
  if (!engine) engines.set(db, (engine = createEngine(db, engineConfigFromEnv, { pool: poolOf(db) })));
  return engine;
}

export function getEngine(): Engine {
  return engineFor(getDb());
}
