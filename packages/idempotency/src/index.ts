// @once/idempotency: the effect happens once, and every retry gets the first answer back.
// Give it a Prisma client on PostgreSQL and it makes any tRPC mutation, webhook or worker step
// idempotent. The main entry is what an app adopting it needs, and loads without @trpc/server;
// the tRPC middleware, jobs, operator tools, the SQL layer, configuration, reasons and the
// conformance kit are subpaths (see package.json).
export { createIdempotencyEngine, type EngineOptions, type IdempotencyEngine } from "./engine.js";
export {
  withIdempotency,
  DeterministicError,
  type IdempotentCall,
  type IdempotentResult,
} from "./wrapper.js";
export { IdempotencyError } from "./errors.js";
export { UniqueViolationError } from "./unique-violation.js";
export { reasonOf } from "./reason-of.js";
