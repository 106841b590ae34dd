// The engine's tunables. Each has a reason; see also src/server/env.ts for the variables.

export interface EngineConfig {
  /**
   * How long a request owns its key before another request may take it over. Longer than a
   * handler normally runs; one that runs longer is not wrong, only overtaken: if a retry takes the
   * lease over, the late handler's completion is fenced out and its transaction rolls back.
   */
  leaseMs: number;
  /**
   * The business transaction's own timeout, independent of the lease: a hung handler must not
   * hold row locks forever, and a slow one (past its lease) must still reach its fenced commit.
   */
  transactionTimeoutMs: number;
  /** How long a completed key and its stored answer are kept and replayed. */
  ttlSeconds: number;
  /** Live keys a scope may hold; past that new keys get 429. Bounds what one tenant can store. */
  maxLiveKeys: number;
  /**
   * How long a scope's live-key count is cached. Counting up to 100 000 rows on every request
   * would cost more than the request; a count a few seconds old lets a tenant overshoot the cap
   * by at most what it creates in that window, which is what the cap is for (bounding storage).
   */
  liveKeyCountTtlMs: number;
  /** Floor for Retry-After: RFC 9110 allows 0, but a client retrying at once only collides again. */
  minRetryAfterSeconds: number;
}

/**
 * Defaults: a 30 s lease is far above a checkout (well under a second) yet frees a crashed
 * instance's keys quickly; 24 h retention covers every client retry policy we know of.
 */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  leaseMs: 30_000,
  transactionTimeoutMs: 60_000,
  ttlSeconds: 86_400,
  maxLiveKeys: 100_000,
  liveKeyCountTtlMs: 5_000,
  minRetryAfterSeconds: 1,
};

function intFromEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return value;
}

/** Read at each call so tests and the demo can change a variable without restarting. */
export function engineConfigFromEnv(): EngineConfig {
  return {
    ...DEFAULT_ENGINE_CONFIG,
    leaseMs: intFromEnv("IDEMPOTENCY_LEASE_MS", DEFAULT_ENGINE_CONFIG.leaseMs),
    ttlSeconds: intFromEnv("IDEMPOTENCY_TTL_SECONDS", DEFAULT_ENGINE_CONFIG.ttlSeconds),
    maxLiveKeys: intFromEnv("IDEMPOTENCY_MAX_LIVE_KEYS", DEFAULT_ENGINE_CONFIG.maxLiveKeys),
    transactionTimeoutMs: intFromEnv("IDEMPOTENCY_TRANSACTION_TIMEOUT_MS", DEFAULT_ENGINE_CONFIG.transactionTimeoutMs),
    liveKeyCountTtlMs: intFromEnv("IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS", DEFAULT_ENGINE_CONFIG.liveKeyCountTtlMs, 0),
  };
}
