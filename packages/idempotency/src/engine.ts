// An engine: one store, its configuration, counters, the releases waiting for the store to come
// back, and (with a listener) the replay cache. One per database client, for the process's life.
import type pg from "pg";
import { parseEngineConfig, type EngineConfig, type EngineConfigInput } from "./config.js";
import { Counters } from "./counters.js";
import { EvictionListener } from "./evictions.js";
import { reaperLagSeconds } from "./jobs/reaper.js";
import { startEngineJobs, type JobLog } from "./jobs/scheduler.js";
import { removeKey, type KeyRemoval, type KeyTarget, type RemoveKeyResult } from "./operator.js";
import { PendingReleases } from "./pending-releases.js";
import type { EngineDeps } from "./protocol/deps.js";
import {
  executeIdempotently,
  type ExecuteOptions,
  type HandlerOutcome,
  type IdempotentRequest,
  type Outcome,
} from "./protocol/execute.js";
import { ReplayCache } from "./replay-cache.js";
import { PostgresIdempotencyStore, type SqlRunner } from "./store/postgres.js";
import type { PrismaLike, SqlTransaction } from "./store/types.js";
import { KeyWaiters } from "./wait/waiters.js";

export interface EngineOptions<TTx extends SqlTransaction> {
  /** Your Prisma client: the business transaction runs on it. */
  prisma: PrismaLike<TTx>;
  /**
   * The pg pool under Prisma's adapter, if you built it: statements outside the transaction go
   * straight to it (faster).
   */
  pool?: pg.Pool;
  /**
   * Prepare the engine's statements on `pool` (a reservation then costs about half); on by
   * default, off by itself behind a pooler that keeps no prepared statements (PoolRunnerOptions).
   */
  preparedStatements?: boolean;
  /** Where the engine reports what it changed on its own (default: console.warn). */
  warn?: (message: string) => void;
  config?: EngineConfigInput;
  /**
   * Opens a direct connection to PostgreSQL (not through a transaction-mode pooler) for LISTEN.
   * With it, finished answers are replayed from memory, busts reach every instance, and a
   * request with `Prefer: wait=N` waits for its key's first request to settle. Without it, every
   * retry reads the database and `Prefer: wait` is not applied: an in-flight key is 409 at once.
   */
  listen?: () => pg.Client;
}

export interface IdempotencyEngine<TTx extends SqlTransaction = SqlTransaction> {
  /**
   * The one way in: reserve `request`'s key, run `handler` in a transaction that commits with the
   * key's completion, store its outcome, or replay the stored one. The tRPC middleware and
   * `withIdempotency` are both built on it. Throws IdempotencyError for every refusal.
   */
  execute(
    request: IdempotentRequest,
    handler: (tx: TTx) => Promise<HandlerOutcome>,
  ): Promise<Outcome>;
  /**
   * The two-phase path, for a handler whose effects are not in this database (it only calls out,
   * passing the key on): no transaction is held while it runs; its answer is stored after it,
   * fenced by the lease. A lease lost meanwhile, or a store gone before the answer is stored,
   * means a retry runs the handler again: what it calls must deduplicate by the key.
   */
  execute(
    request: IdempotentRequest,
    handler: () => Promise<HandlerOutcome>,
    options: ExecuteOptions & { transaction: false },
  ): Promise<Outcome>;
  readonly config: EngineConfig;
  readonly counters: Counters;
  /** Runs statements outside any transaction (jobs, counters, your own tools). */
  readonly run: SqlRunner;
  /** Resolves once the eviction listener is connected (at once without one). */
  readonly ready: Promise<void>;
  /**
   * Resolves once this process has heard every eviction and settle announced (committed) before
   * the call: a test that changed keys behind the engine's back (and announced it, as the
   * conformance kit does when it ages a key) waits on it before the next request. At once without
   * a listener.
   */
  caughtUp(): Promise<void>;
  /** The reaper, the sweeper and the counter flush on timers; returns their stop function. */
  startJobs(log: JobLog): () => Promise<void>;
  /**
   * How far the reaper is behind retention: the oldest key past it, its age in seconds (0 if none).
   */
  reaperLagSeconds(): Promise<number>;
  /**
   * Bust or release a key (see operator.ts) on your transaction; this process forgets its cached
   * answer at once, every other instance when the transaction commits (NOTIFY).
   */
  removeKey(tx: TTx, target: KeyTarget, mode: KeyRemoval): Promise<RemoveKeyResult>;
  /** Forgets a key's cached answer in this process (other instances hear of busts by NOTIFY). */
  evict(scope: string, key: string): void;
  /** The replay cache's entries and their weight in bytes (both 0 without a cache), for metrics. */
  replayCacheUsage(): { entries: number; bytes: number };
  /**
   * Whether this process holds the key's settled answer in memory, so a retry of it costs no
   * statement: a server holding duplicates of a request in flight (`Prefer: wait`) asks it when
   * that request ends, before it lets them through (false without a cache, or while it is off).
   */
  remembers(scope: string, key: string): boolean;
  /** Stops the listener and the pending releases. */
  close(): Promise<void>;
}

/**
 * Each engine's insides, kept on the engine under a symbol and off its public type; the package's
 * own tests read them. On the engine itself, not in a module's table: no state at module level.
 */
const DEPS = Symbol.for("once.idempotency.engineDeps");
type WithDeps<TTx extends SqlTransaction> = IdempotencyEngine<TTx> & { [DEPS]?: EngineDeps<TTx> };

/** @internal Not exported from any entry point. */
export function depsOf<TTx extends SqlTransaction>(
  engine: IdempotencyEngine<TTx>,
): EngineDeps<TTx> {
  const deps = (engine as WithDeps<TTx>)[DEPS];
  if (!deps) throw new Error("not an engine made by createIdempotencyEngine");
  return deps;
}

export function createIdempotencyEngine<TTx extends SqlTransaction>(
  options: EngineOptions<TTx>,
): IdempotencyEngine<TTx> {
  const config = parseEngineConfig(options.config);
  const announceSettled = config.maxWaitMs > 0;
  const store = new PostgresIdempotencyStore<TTx>(options.prisma, options.pool, {
    prepare: options.preparedStatements,
    warn: options.warn,
    announceSettled,
  });
  const replayCache =
    options.listen && config.replayCacheSize > 0 && config.replayCacheBytes > 0
      ? new ReplayCache({ maxEntries: config.replayCacheSize, maxBytes: config.replayCacheBytes })
      : undefined;
  const waiters = new KeyWaiters();
  const listener =
    options.listen && (replayCache || announceSettled)
      ? new EvictionListener(options.listen, replayCache, waiters).start()
      : undefined;
  const deps: EngineDeps<TTx> = {
    store,
    config,
    counters: new Counters(),
    pendingReleases: new PendingReleases((record) => store.release(record)),
    replayCache,
    waiters,
    liveKeyCounts: new Map(),
  };
  const engine: WithDeps<TTx> = engineOver(deps, store, listener);
  Object.defineProperty(engine, DEPS, { value: deps });
  return engine;
}

/** The engine's public face over its insides. */
function engineOver<TTx extends SqlTransaction>(
  deps: EngineDeps<TTx>,
  store: PostgresIdempotencyStore<TTx>,
  listener: EvictionListener | undefined,
): IdempotencyEngine<TTx> {
  const { config, counters, replayCache, pendingReleases } = deps;
  const jobOptions = {
    intervalMs: config.reaperIntervalMs,
    lagWarnSeconds: config.reaperLagWarnSeconds,
    counterFlushMs: config.counterFlushMs,
  };
  return {
    execute: (
      request: IdempotentRequest,
      handler: (tx: TTx) => Promise<HandlerOutcome>,
      options?: ExecuteOptions,
    ) => executeIdempotently(deps, request, handler, options),
    config,
    counters,
    run: store.run,
    ready: listener?.ready ?? Promise.resolve(),
    caughtUp: async () =>
      listener?.caughtUp(async (channel, payload) => {
        await store.run.execute("SELECT pg_notify($1, $2)", [channel, payload]);
      }),
    startJobs: (log) => startEngineJobs(store.run, counters, jobOptions, log),
    reaperLagSeconds: () => reaperLagSeconds(store.run),
    ...replayCacheFace<TTx>(replayCache),
    async close() {
      pendingReleases.stop();
      await listener?.stop();
    },
  };
}

/** What the engine says and does about its replay cache (a cache that may not exist). */
function replayCacheFace<TTx extends SqlTransaction>(
  replayCache: ReplayCache | undefined,
): Pick<IdempotencyEngine<TTx>, "evict" | "replayCacheUsage" | "remembers" | "removeKey"> {
  return {
    evict: (scope, key) => replayCache?.evict(scope, key),
    replayCacheUsage: () => ({ entries: replayCache?.size ?? 0, bytes: replayCache?.bytes ?? 0 }),
    remembers: (scope, key) => (replayCache?.serving ?? false) && replayCache!.has(scope, key),
    async removeKey(tx, target, mode) {
      const result = await removeKey(tx, target, mode);
      if (result.removed) replayCache?.evict(result.record.scope, result.record.key);
      return result;
    },
  };
}
