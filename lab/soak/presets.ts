// The soak's presets over the defaults (config.ts): `--short` for npm test, and the patroni
// profiles'.
import type { SoakConfig } from "./soak-config";

/**
 * The patroni profiles: the database faults are the subject, so no instance is killed (the other
 * profiles do that), and the run is sized to finish in under 6 minutes on 2 cores with a
 * three-node cluster beside the app: ~15 s for the cluster, 100 s under fire with four failovers
 * or stalls, a minute for the outbox to drain.
 */
export const PATRONI: Partial<SoakConfig> = {
  durationMs: 100_000,
  settleMs: 20_000,
  clients: 32,
  killEveryMs: 0,
  drainMs: 60_000,
  operatorEveryMs: 2_000,
  providerFailureRate: 0.1,
  providerTimeoutRate: 0.05,
};

/** The demonstration: one stall, then the primary lost, nothing else. */
export const PATRONI_ASYNC: Partial<SoakConfig> = {
  ...PATRONI,
  durationMs: 45_000,
  switchoverAt: 0,
  postmasterKillAt: 0,
  nodeLossAt: 0,
  stallAt: 0.5,
  stallMs: 3_000,
};

/**
 * `--short`: what `npm test` runs. One profile (through PgBouncer: the harder one), every fault
 * once.
 */
export const SHORT: Partial<SoakConfig> = {
  profiles: ["pgbouncer"],
  durationMs: 25_000,
  settleMs: 5_000,
  maxRequests: 40_000,
  clients: 32,
  killEveryMs: 10_000,
  drainMs: 20_000,
  operatorEveryMs: 1_000,
  // Fewer provider failures, so every payment settles within the short drain (at most ~4 failed
  // attempts, whose backoff adds up to ~30 s, are likely at these rates: 1 in 2 000 rows).
  providerFailureRate: 0.1,
  providerTimeoutRate: 0.05,
};
