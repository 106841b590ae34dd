// What the protocol runs on: one engine's store, configuration and bookkeeping.
import type { EngineConfig } from "../config.js";
import type { Counters } from "../counters.js";
import type { ReplayCache } from "../replay-cache.js";
import type { PendingReleases } from "../pending-releases.js";
import type { IdempotencyStore, SqlTransaction } from "../store/types.js";
import type { KeyWaiters } from "../wait/waiters.js";

export interface EngineDeps<TTx extends SqlTransaction = SqlTransaction> {
  store: IdempotencyStore<TTx>;
  config: EngineConfig;
  counters: Counters;
  /** Releases that failed because the store was gone, retried until it is back. */
  pendingReleases: PendingReleases;
  /** Finished answers in memory; absent when this process cannot hear evictions. */
  replayCache?: ReplayCache;
  /**
   * Requests waiting for a key in flight (Prefer: wait); listening only while LISTEN is connected.
   */
  waiters: KeyWaiters;
  /**
   * Per scope: the last live-key count, or the one being taken (liveKeyCountTtlMs).
   */
  liveKeyCounts: Map<string, LiveKeyCount>;
}

/** A scope's live-key count: `at` is when it came back (Date.now()), unset while it is taken. */
export interface LiveKeyCount {
  count: Promise<number>;
  at?: number;
}
