// The soak's knobs, read once from the command line. Every default has its reason; `npm run soak --
// --help` lists them. Two presets: the default run (3 minutes under fire per profile, both
// profiles) and `--short` (the one `npm test` runs: one profile, under 90 s in all).
import { parseArgs } from "node:util";
import { PATRONI, PATRONI_ASYNC, SHORT } from "./presets";
import { Profile, type SoakConfig } from "./soak-config";

export { Profile, type SoakConfig } from "./soak-config";

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
  outDir: "lab/soak/out",
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
