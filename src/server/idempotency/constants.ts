// Key states and the engine's reasons, as `as const` objects with derived unions: no free strings.

export const KeyStatus = {
  PROCESSING: "PROCESSING",
  COMPLETED: "COMPLETED",
  FAILED: "FAILED",
} as const;
export type KeyStatus = (typeof KeyStatus)[keyof typeof KeyStatus];

/** `error.data.reason` of every answer the engine itself gives. */
export const Reason = {
  KEY_MISSING: "idempotency_key_missing",
  KEY_INVALID: "idempotency_key_invalid",
  KEY_REUSED: "idempotency_key_reused",
  IN_PROGRESS: "request_in_progress",
  TOO_MANY_KEYS: "too_many_keys",
  STORE_UNAVAILABLE: "store_unavailable",
  BATCH_NOT_ALLOWED: "idempotency_batch_not_allowed",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

export const Header = {
  KEY: "idempotency-key",
  REPLAYED: "Idempotent-Replayed",
  EXPIRES: "Idempotency-Key-Expires",
  RETRY_AFTER: "Retry-After",
} as const;

/** What the counters count, per scope and procedure. */
export const CounterEvent = {
  EXECUTED: "executed",
  REPLAYED: "replayed",
  CONFLICTS: "conflicts",
  MISMATCHES: "mismatches",
  RELEASED: "released",
  TAKEOVERS: "takeovers",
  STORE_ERRORS: "store_errors",
  TOO_MANY_KEYS: "too_many_keys",
  BUSTED: "busted",
  FENCED: "fenced",
} as const;
export type CounterEvent = (typeof CounterEvent)[keyof typeof CounterEvent];
