// @once/idempotency/sql: the store's layer, for tools that run the engine's statements and for an
// entry point of your own over engine.execute (its request, handler outcome and outcome types).
export {
  runnerOf,
  poolRunner,
  type SqlRunner,
  type Sql,
  type PoolRunnerOptions,
} from "../store/postgres.js";
export type { NamedStatement } from "../store/sql.js";
export type {
  KeyRecord,
  PrismaLike,
  SqlTransaction,
  StoredResponse,
  IdempotencyStore,
} from "../store/types.js";
export type { IdempotentRequest, HandlerOutcome, Outcome } from "../protocol/execute.js";
export { fingerprint, canonicalJson } from "../fingerprint.js";
