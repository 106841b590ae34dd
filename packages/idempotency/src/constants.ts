// Key states, headers and counter events, as `as const` objects with derived unions: no free
// strings.

export const KeyStatus = {
  PROCESSING: "PROCESSING",
  COMPLETED: "COMPLETED",
  FAILED: "FAILED",
} as const;
export type KeyStatus = (typeof KeyStatus)[keyof typeof KeyStatus];

export const Header = {
  KEY: "Idempotency-Key",
  REPLAYED: "Idempotent-Replayed",
  EXPIRES: "Idempotency-Key-Expires",
  RETRY_AFTER: "Retry-After",
  /**
   * RFC 7240: `Prefer: wait=N` asks to wait up to N seconds for a key in flight; the answer says
   * `Preference-Applied: wait=N`.
   */
  PREFER: "Prefer",
  PREFERENCE_APPLIED: "Preference-Applied",
  /**
   * On a replay of an answer stored without its body (larger than maxStoredBodyBytes): `omitted`.
   */
  REPLAY_BODY: "Idempotent-Replay-Body",
} as const;

/**
 * The LISTEN/NOTIFY channels every instance hears (evictions.ts listens; store/sql.ts's settling
 * statements notify). Both carry the payload `["scope", "key"]` (JSON).
 */
export const EVICTION_CHANNEL = "once_idempotency_evict";
export const SETTLED_CHANNEL = "once_idempotency_settled";

/** What the counters count, per scope and procedure. */
export const CounterEvent = {
  EXECUTED: "executed",
  REPLAYED: "replayed",
  CONFLICTS: "conflicts",
  MISMATCHES: "mismatches",
  RELEASED: "released",
  TAKEOVERS: "takeovers",
  /** The store could not be reached (503 store_unavailable). */
  STORE_ERRORS: "store_errors",
  /** The store was up but no connection came free in time (503 store_busy). */
  STORE_BUSY: "store_busy",
  TOO_MANY_KEYS: "too_many_keys",
  BUSTED: "busted",
  FENCED: "fenced",
  /** An answer stored without its body: larger than maxStoredBodyBytes. */
  BODIES_OMITTED: "bodies_omitted",
} as const;
export type CounterEvent = (typeof CounterEvent)[keyof typeof CounterEvent];
