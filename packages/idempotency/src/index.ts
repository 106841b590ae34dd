// @once/idempotency: the effect happens once, and every retry gets the first answer back.
// Give it a Prisma client on PostgreSQL and it makes any tRPC mutation, webhook or worker step
// idempotent. This file is the whole public surface.
export { createIdempotencyEngine, type EngineOptions, type IdempotencyEngine } from "./engine.js";
export { parseEngineConfig, DEFAULT_ENGINE_CONFIG, engineConfigSchema, type EngineConfig, type EngineConfigInput } from "./config.js";
export { createIdempotencyMiddleware, type HttpAccess, type IdempotencyMiddlewareOptions, type IdempotentContext } from "./trpc/middleware.js";
export { toTRPCError } from "./trpc/errors.js";
export { withIdempotency, DeterministicError, type IdempotentCall, type IdempotentResult } from "./wrapper.js";
export { IdempotencyError } from "./errors.js";
export { Reason, REASONS, type ReasonInfo } from "./reasons.js";
export { KeyStatus, Header, CounterEvent } from "./constants.js";
export { parseIdempotencyKey, MAX_KEY_LENGTH, type ParsedKey } from "./key.js";
export { fingerprint, canonicalJson } from "./fingerprint.js";
export { classifyStoreFailure, isStoreUnavailable, StoreFailure } from "./store/unavailable.js";
export { runnerOf, poolRunner, type SqlRunner, type Sql, type PoolRunnerOptions } from "./store/postgres.js";
export type { NamedStatement } from "./store/sql.js";
export type { KeyRecord, PrismaLike, SqlTransaction, StoredResponse, IdempotencyStore } from "./store/types.js";
export { removeKey, KeyRemoval, LeaseState, type RemoveKeyResult, type OperatorKeyRecord } from "./operator.js";
export { reapExpiredKeys, REAPER_BATCH_SIZE, type ReaperResult } from "./jobs/reaper.js";
export { sweepStuckKeys, SWEEPER_GRACE_SECONDS, type SweeperResult } from "./jobs/sweeper.js";
export { Counters, trimCounterMinutes, type CounterDelta } from "./counters.js";
export { EVICTION_CHANNEL } from "./evictions.js";
