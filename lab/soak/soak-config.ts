// What a soak run is told: its profiles and knobs. Read from the command line by config.ts,
// given whole by the presets (presets.ts).
export const Profile = {
  DIRECT: "direct",
  PGBOUNCER: "pgbouncer",
  PATRONI: "patroni",
  PATRONI_ASYNC: "patroni-async",
} as const;
export type Profile = (typeof Profile)[keyof typeof Profile];

export interface SoakConfig {
  profiles: Profile[];
  /** Time under fire: clients start intents until then. */
  durationMs: number;
  /** After the fire: how long clients may keep retrying intents they already started. */
  settleMs: number;
  /** Upper bound on HTTP requests in one profile (a second stop condition besides time). */
  maxRequests: number;
  clients: number;
  instances: number;
  /**
   * Share of requests whose response the client drops (closes the connection) before reading it.
   */
  dropRate: number;
  /** Share of intents that ask for a slow checkout (longer than HAProxy's server timeout). */
  slowRate: number;
  slowMs: number;
  /**
   * Share of answered intents the client sends once more later (a reload), after a possible bust.
   */
  resendRate: number;
  /** An instance is SIGKILLed this often (and restarted at once). */
  killEveryMs: number;
  /**
   * PostgreSQL is restarted once, and stopped for `pgStopMs` once, at these fractions of the run.
   */
  pgRestartAt: number;
  pgStopAt: number;
  pgStopMs: number;
  /** The simulated provider: share of calls that fail, share that charge and then time out. */
  providerFailureRate: number;
  providerTimeoutRate: number;
  /** How often the operator busts a random completed key and releases stuck leases. */
  operatorEveryMs: number;
  /**
   * The engine's lease for this run: longer than the slowest checkout, short enough to expire in a
   * run.
   */
  leaseMs: number;
  /** HAProxy's server timeout: shorter than the slow checkouts, so HAProxy re-sends them. */
  haproxyServerTimeoutMs: number;
  /** After the clients stop: how long the outbox may take to drain. */
  drainMs: number;
  /** Where the table (markdown) and the chart (SVG) go; "" to skip the table file. */
  outDir: string;
  seed: number;
  /**
   * Give what needs a session (the replay cache's LISTEN) a direct connection
   * (DIRECT_DATABASE_URL), as production setups do behind PgBouncer. `--sessionsThroughPgbouncer`
   * turns it off, to show what goes wrong without it.
   */
  directSessions: boolean;
  /**
   * Patroni profiles: the fault schedule (fractions of the fire; 0 leaves one out), see
   * failover.ts.
   */
  switchoverAt: number;
  postmasterKillAt: number;
  nodeLossAt: number;
  stallAt: number;
  nodeAwayMs: number;
  stallMs: number;
  /**
   * Patroni's leader TTL: a lost node's leadership outlives it this long (the node-loss outage).
   */
  patroniTtlSeconds: number;
  /**
   * First of the loopback ports the patroni profiles take in a row (etcd, nodes, proxies,
   * instances); 0: any free ports.
   */
  basePort: number;
}
