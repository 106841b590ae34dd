// The engine's tunables, validated once (zod) and passed in: the engine reads no environment
// variable. Each value has a reason.
import { z } from "zod";

/** A whole number of at least `min` (milliseconds, seconds, counts, bytes). */
const int = (min: number) => z.number().int().min(min);

export const engineConfigSchema = z
  .object({
    /**
     * How long a request owns its key before another request may take it over. 30 s is far above
     * a normal handler (well under a second) yet frees a crashed instance's keys quickly. One that
     * runs longer is not wrong, only overtaken: its completion is fenced out and rolls back.
     */
    leaseMs: int(1).default(30_000),
    /**
     * The business transaction's own timeout, independent of the lease: a hung handler must not
     * hold row locks forever, and a slow one (past its lease) must still reach its fenced commit.
     */
    transactionTimeoutMs: int(1).default(60_000),
    /**
     * How long a finished key and its answer are kept and replayed: 24 h covers every client retry
     * policy we know.
     */
    ttlSeconds: int(1).default(86_400),
    /** Live keys a scope may hold; past that new keys get 429. Bounds what one tenant can store. */
    maxLiveKeys: int(1).default(100_000),
    /**
     * How long a scope's live-key count is cached. Counting up to 100 000 rows on every request
     * would cost more than the request; a count a few seconds old lets a tenant overshoot the cap
     * by at most what it creates in that window, which is what the cap is for (bounding storage).
     */
    liveKeyCountTtlMs: int(0).default(5_000),
    /**
     * Floor for Retry-After: RFC 9110 allows 0, but a client retrying at once only collides again.
     */
    minRetryAfterSeconds: int(0).default(1),
    /**
     * Finished answers kept in this process's memory, so a retry is answered without a round trip.
     * 10 000 answers of a few hundred bytes are a few MB; 0 turns the cache off.
     */
    replayCacheSize: int(0).default(10_000),
    /**
     * The replay cache's budget in bytes (bodies, headers and a fixed overhead per entry), beside
     * its entry count: 10 000 entries of 1 MiB would be 10 GB. 32 MiB holds the usual answers of a
     * few hundred bytes by the ten thousand, and any mix of large ones without threatening a
     * server's memory; the least recently used answers leave first.
     */
    replayCacheBytes: int(0).default(32 * 1024 * 1024),
    /**
     * The largest answer body stored with its key, in bytes. Above it the outcome (status, content
     * type, headers) is stored without its body, and a replay says so (the HTTP layer answers the
     * stored status and headers with an empty body and `Idempotent-Replay-Body: omitted`, or the
     * route's own header name). 1 MiB is far above an API's usual answer; a key table row, a cache
     * entry and a replay stay bounded whatever a handler returns. The first answer is always sent
     * whole (the HTTP layer streams what lies past the limit instead of holding it).
     */
    maxStoredBodyBytes: int(0).default(1024 * 1024),
    /**
     * How often this process writes its counters to the counter table. Every 5 s keeps dashboards
     * near-live for one small upsert per interval; the jobs' stop function flushes once more, so a
     * graceful stop loses nothing (a crash loses at most this much).
     */
    counterFlushMs: int(1).default(5_000),
    /**
     * The longest a request carrying `Prefer: wait=N` waits for the request that holds its key
     * (N is capped to this). 10 s is longer than any handler should run (a checkout takes well
     * under a second) yet shorter than common proxy and browser timeouts (30–60 s), so the wait
     * ends in an answer, not in a cut connection; each waiter holds no database connection while
     * it sleeps, only a timer. 0 turns waiting off, and with it the NOTIFY every settled key
     * sends (one per request: it serialises commits on a global lock in PostgreSQL, see
     * docs/scale.md); every instance of a deployment should agree on on or off.
     */
    maxWaitMs: int(0).default(10_000),
    /**
     * How often the reaper starts a round when it is caught up. A minute: keys expire after hours,
     * so a minute's delay in reclaiming them costs little, and a round that finds nothing is one
     * indexed query. While behind, rounds follow each other after a 1 s breather.
     */
    reaperIntervalMs: int(1).default(60_000),
    /**
     * The reaper's lag (age of the oldest key past retention) above which it warns, in its log
     * line and on the dashboard. Caught up, the lag stays under one interval (60 s); five minutes
     * means several rounds in a row could not catch up, so the table is growing.
     */
    reaperLagWarnSeconds: int(1).default(300),
  })
  .strict();

export type EngineConfig = z.output<typeof engineConfigSchema>;
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

export const DEFAULT_ENGINE_CONFIG: EngineConfig = engineConfigSchema.parse({});

/** Validates a configuration; a wrong value is an error that names it. */
export function parseEngineConfig(input: EngineConfigInput = {}): EngineConfig {
  const parsed = engineConfigSchema.safeParse(input);
  if (!parsed.success)
    throw new Error(`invalid idempotency configuration: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
