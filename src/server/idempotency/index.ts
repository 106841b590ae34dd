// The engine's public surface. It imports nothing from the shop: give it a Prisma client and it
// makes any mutation, webhook or worker step idempotent.
import type pg from "pg";
import type { PrismaClient } from "../../generated/prisma/client";
import { engineConfigFromEnv, type EngineConfig } from "./config";
import { Counters } from "./counters";
import type { EngineDeps } from "./protocol";
import { PrismaIdempotencyStore } from "./store";

export { createIdempotencyMiddleware, toTRPCError, type IdempotencyContext } from "./middleware";
export { withIdempotency, DeterministicError, type IdempotentCall, type IdempotentResult } from "./wrapper";
export { executeIdempotently, decide, type EngineDeps, type Outcome } from "./protocol";
export { PrismaIdempotencyStore, type IdempotencyStore, type KeyRecord, type Tx } from "./store";
export { Counters } from "./counters";
export { DEFAULT_ENGINE_CONFIG, engineConfigFromEnv, type EngineConfig } from "./config";
export { KeyStatus, Reason, Header, CounterEvent } from "./constants";
export * from "./errors";
export { parseIdempotencyKey } from "./key";
export { fingerprint, canonicalJson } from "./fingerprint";
export { reapExpiredKeys } from "./jobs/reaper";
export { sweepStuckKeys } from "./jobs/sweeper";
export { startEngineJobs } from "./jobs/scheduler";

/** An engine on `db`. `config` is read on every call when given as a function (env-driven apps). */
export function createEngine(
  db: PrismaClient,
  config: EngineConfig | (() => EngineConfig) = engineConfigFromEnv,
  options: { /** The pg pool under `db`'s adapter, for the statements outside transactions. */ pool?: pg.Pool } = {},
) {
  const store = new PrismaIdempotencyStore(db, options.pool);
  const counters = new Counters();
  const deps = (): EngineDeps => ({ store, counters, config: typeof config === "function" ? config() : config });
  return { db, store, counters, deps };
}
export type Engine = ReturnType<typeof createEngine>;
