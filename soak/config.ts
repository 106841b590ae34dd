// The soak's knobs, read once from the command line. Every default has its reason; `npm run soak --
// --help` lists them. Two presets: the default run (3 minutes under fire per profile, both
// profiles) and `--short` (the one `npm test` runs: one profile, under 90 s in all).
import { parseArgs } from "node:util";
import { PATRONI, PATRONI_ASYNC, SHORT } from "./presets";

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

export const isPatroni = (p: Profile) => p === Profile.PATRONI || p === Profile.PATRONI_ASYNC;

const DEFAULTS: SoakConfig = {
  profiles: [Profile.DIRECT, Profile.PGBOUNCER],
  durationMs: 180_000,
  settleMs: 30_000,
  maxRequests: 200_000,
  clients: 64,
  instances: 3,
  dropRate: 0.1,
  slowRate: 0.05,
  slowMs: 8_000,
  resendRate: 0.1,
  killEveryMs: 20_000,
  pgRestartAt: 0.35,
  pgStopAt: 0.7,
  pgStopMs: 5_000,
  providerFailureRate: 0.2,
  providerTimeoutRate: 0.1,
  operatorEveryMs: 2_000,
  leaseMs: 15_000,
  haproxyServerTimeoutMs: 6_000,
  drainMs: 90_000,
  outDir: "soak/out",
  seed: Date.now() % 1_000_000,
  directSessions: true,
  // Each fault waits for the cluster to be whole again after the one before (a node's rejoin takes
  // a while on 2 cores), so the stall, which needs no recovery, comes early, and the node loss
  // last.
  switchoverAt: 0.1,
  stallAt: 0.3,
  postmasterKillAt: 0.45,
  nodeLossAt: 0.65,
  nodeAwayMs: 12_000,
  stallMs: 3_000,
  patroniTtlSeconds: 10,
  basePort: 0,
};

const NUMERIC: (keyof SoakConfig)[] = [
  "durationMs",
  "settleMs",
  "maxRequests",
  "clients",
  "instances",
  "dropRate",
  "slowRate",
  "slowMs",
  "resendRate",
  "killEveryMs",
  "pgRestartAt",
  "pgStopAt",
  "pgStopMs",
  "providerFailureRate",
  "providerTimeoutRate",
  "operatorEveryMs",
  "leaseMs",
  "haproxyServerTimeoutMs",
  "drainMs",
  "seed",
  "switchoverAt",
  "postmasterKillAt",
  "nodeLossAt",
  "stallAt",
  "nodeAwayMs",
  "stallMs",
  "patroniTtlSeconds",
  "basePort",
];

export function parseSoakArgs(argv: string[]): SoakConfig | "help" {
  const options: Record<string, { type: "string" | "boolean" }> = {
    short: { type: "boolean" },
    help: { type: "boolean" },
    sessionsThroughPgbouncer: { type: "boolean" },
    profile: { type: "string" },
    out: { type: "string" },
  };
  for (const name of NUMERIC) options[name] = { type: "string" };
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  if (values.help) return "help";
  const profiles = typeof values.profile === "string" ? parseProfiles(values.profile) : undefined;
  // A patroni profile runs alone, with its own preset (the flags still override it).
  const preset =
    profiles?.[0] === Profile.PATRONI
      ? PATRONI
      : profiles?.[0] === Profile.PATRONI_ASYNC
        ? PATRONI_ASYNC
        : values.short
          ? SHORT
          : {};
  const config: SoakConfig = { ...DEFAULTS, ...preset };
  if (profiles) config.profiles = profiles;
  if (typeof values.out === "string") config.outDir = values.out;
  if (values.sessionsThroughPgbouncer) config.directSessions = false;
  for (const name of NUMERIC) {
    const raw = values[name];
    if (typeof raw !== "string") continue;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0)
      throw new Error(`--${name} must be a non-negative number, not "${raw}"`);
    (config as unknown as Record<string, number>)[name] = n;
  }
  const shares = [
    "dropRate",
    "slowRate",
    "resendRate",
    "providerFailureRate",
    "providerTimeoutRate",
    "pgRestartAt",
    "pgStopAt",
  ] as const;
  for (const rate of [
    ...shares,
    "switchoverAt",
    "postmasterKillAt",
    "nodeLossAt",
    "stallAt",
  ] as const) {
    if (config[rate] > 1)
      throw new Error(`--${rate} is a share between 0 and 1, not ${config[rate]}`);
  }
  if (config.instances < 2)
    throw new Error("--instances must be at least 2: the load balancer needs somewhere to re-send");
  if (config.slowMs >= config.leaseMs)
    throw new Error(
      "--slowMs must stay under --leaseMs: a lease shorter than the work is a different test",
    );
  return config;
}

function parseProfiles(raw: string): Profile[] {
  if (raw === "both") return [Profile.DIRECT, Profile.PGBOUNCER];
  const one = Object.values(Profile).find((p) => p === raw);
  if (one) return [one];
  throw new Error(`--profile is direct, pgbouncer, both, patroni or patroni-async, not "${raw}"`);
}
