// `@once/idempotency/client`: what a tRPC client needs to speak the idempotency protocol. Nothing
// here imports the server side, a database driver or React (the hook is
// `@once/idempotency/client/react`).
export { idempotencyLink, idempotencyInfoOfError, type IdempotencyLinkOptions } from "./link.js";
export {
  idempotencyHeaders,
  type IdempotencyContext,
  type IdempotencyEvent,
  type IdempotencyInfo,
} from "./headers.js";
export {
  createIntentKeys,
  fingerprintOf,
  newIdempotencyKey,
  type IntentKeys,
  type IntentKeysOptions,
  type KeyValueStorage,
  type PendingIntent,
} from "./intent-keys.js";
export type { RetryReason } from "./retry-policy.js";
