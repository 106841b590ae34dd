// The process's whole configuration: one zod schema for every variable the app, the engine, the
// payment jobs, the sessions and the logger read, parsed once at start-up (`loadConfig`) and
// passed down from the composition root (src/server/app.ts). Nothing else in src/ or packages/
// reads process.env: a typo in a variable stops the process with one sentence naming it, before it
// listens, instead of failing a request later.
import { parseEngineConfig, type EngineConfig } from "@once/idempotency/config";
import { z } from "zod";
import { paymentEnvShape, paymentSettingsFrom, type PaymentSettings } from "./payments/config";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const flag = z.enum(["0", "1"]);

// The engine's tunables as variables; each is validated again, with its reason, by the engine's
// own schema (packages/idempotency/src/config.ts). The engine itself reads no environment.
const ENGINE_VARIABLES = {
  leaseMs: "IDEMPOTENCY_LEASE_MS",
  ttlSeconds: "IDEMPOTENCY_TTL_SECONDS",
  maxLiveKeys: "IDEMPOTENCY_MAX_LIVE_KEYS",
  transactionTimeoutMs: "IDEMPOTENCY_TRANSACTION_TIMEOUT_MS",
  liveKeyCountTtlMs: "IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS",
  replayCacheSize: "IDEMPOTENCY_REPLAY_CACHE_SIZE",
  replayCacheBytes: "IDEMPOTENCY_REPLAY_CACHE_BYTES",
  maxStoredBodyBytes: "IDEMPOTENCY_MAX_STORED_BODY_BYTES",
  counterFlushMs: "IDEMPOTENCY_COUNTER_FLUSH_MS",
  maxWaitMs: "IDEMPOTENCY_MAX_WAIT_MS",
} as const;
const engineShape = Object.fromEntries(Object.values(ENGINE_VARIABLES).map((name) => [name, z.coerce.number().int().optional()])) as Record<
  (typeof ENGINE_VARIABLES)[keyof typeof ENGINE_VARIABLES],
  z.ZodOptional<z.ZodCoercedNumber>
>;

const schema = z.object({
  // No default: a tool started without NODE_ENV (db:setup, the users CLI) is not "development".
  NODE_ENV: z.enum(["development", "production", "test"]).optional(),
  // Unset: the server refuses to start (npm run dev/start set it to the embedded PostgreSQL).
  DATABASE_URL: z.string().min(1).optional(),
  // Behind a transaction-mode pooler (PgBouncer), DATABASE_URL is the pooler and this is
  // PostgreSQL itself, for what needs a session (LISTEN, migrations).
  DIRECT_DATABASE_URL: z.string().min(1).optional(),
  // Where `npm run dev` / `npm start` listen (scripts/lib/listen-address.ts). Unset: 127.0.0.1 for
  // `npm run dev` and for any demo, because demo mode's doors (one-click operator, published
  // tokens) must not face a network by accident; a production `npm start` serves 0.0.0.0.
  HOST: z.string().trim().min(1).optional(),
  // "1": demo mode may listen on an address other machines reach (a shared demo box). Off by
  // default, so a HOST=0.0.0.0 left in a shell does not publish the operator's one-click sign-in.
  DEMO_ALLOW_REMOTE: flag.default("0"),
  // How many proxies stand in front of the app, each appending the address it saw to
  // X-Forwarded-For (src/server/http/client-address.ts). 0 by default: the header is not believed
  // and the socket's peer is the client, because on a server reached directly a client writes
  // whatever it likes there (rotating it handed out a fresh sign-in budget per request). Behind
  // HAProxy with `option forwardfor`: 1.
  TRUSTED_PROXIES: intFrom(0),
  // The simulated provider's books (its charges, idempotency records, events) in a database of
  // their own, migrated with the app's schema, as a real provider's are outside our cluster: a
  // failover that loses the shop's last commits cannot erase a charge, so the soak sees what was
  // really charged. Unset (development, tests): the provider's tables in the shop's database.
  // Reconciliation needs both in one database and is off when this is set.
  PROVIDER_DATABASE_URL: z.string().min(1).optional(),
  // Prepared statements: each statement is parsed and planned once per connection instead of on
  // every call (a reservation costs half). Unset: on, unless DIRECT_DATABASE_URL says DATABASE_URL
  // is a pooler; a pooler that keeps prepared statements (PgBouncer 1.21+ with
  // max_prepared_statements) may turn them back on with "1".
  DATABASE_PREPARED_STATEMENTS: flag.optional(),
  // Demo mode opens doors on purpose: one-click demo accounts, the demo API tokens, and a slow
  // request on ask (header x-demo-delay-ms). Only `DEMO_MODE=1`, or `next dev` (NODE_ENV=development),
  // turns it on; a production build, db:setup and the CLI tools have it off unless told.
  DEMO_MODE: z.enum(["0", "1", "true", "false"]).optional(),
  DEMO_PROCESSING_DELAY_MS: intFrom(0),
  DEMO_PROVIDER_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  // `npm run bench:http` only: serves benchControl.placeOrder, the checkout without the engine, as
  // the control its figures are divided by. A mutation with no idempotency is a door, so it needs
  // demo mode too.
  ONCE_BENCH_CONTROL: flag.default("0"),
  // "0": an instance that only serves requests (no reaper, sweeper, counter flush, payment loops).
  ONCE_BACKGROUND_JOBS: flag.default("1"),
  // "0": this server runs no payment loops (outbox worker, provider events, reconciliation);
  // `npm run worker` runs them in a process of its own, so their CPU does not queue behind
  // requests on the server's one thread. The engine's own jobs (reaper, sweeper, counter flush)
  // stay: the counters live in the server's memory.
  ONCE_PAYMENT_JOBS: flag.default("1"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  // Next.js's own switch: set, `next start` leaves SIGTERM/SIGINT to us, so the server stops its
  // jobs and flushes its counters before it exits (npm start sets it; see src/instrumentation.ts).
  NEXT_MANUAL_SIG_HANDLE: z.string().optional(),
  ...engineShape,
  ...paymentEnvShape,
});

export interface AppConfig {
  nodeEnv: "development" | "production" | "test" | undefined;
  /** Whether the demo doors are open: DEMO_MODE, or `next dev`. */
  demo: boolean;
  database: {
    url: string | undefined;
    /** PostgreSQL itself, for LISTEN and migrations: DIRECT_DATABASE_URL, or DATABASE_URL. */
    directUrl: string | undefined;
    preparedStatements: boolean;
    /** The simulated provider's own database (PROVIDER_DATABASE_URL); unset: the shop's. */
    providerUrl: string | undefined;
  };
  engine: EngineConfig;
  payments: PaymentSettings;
  jobs: { background: boolean; payments: boolean };
  /** Whether this process, not Next.js, handles SIGTERM/SIGINT (NEXT_MANUAL_SIG_HANDLE). */
  manualSignals: boolean;
  /** Where the server listens, and whom it believes about the client's address. */
  http: { host: string | undefined; demoAllowRemote: boolean; trustedProxies: number };
  demoProcessingDelayMs: number;
  benchControl: boolean;
  logLevel: NonNullable<z.infer<typeof schema>["LOG_LEVEL"]>;
}

export type ConfigRole = "server" | "tool";

/** Thrown for a missing or invalid variable: its message is the one sentence a process prints. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

function engineConfigFrom(e: z.infer<typeof schema>): EngineConfig {
  const input: Record<string, number> = {};
  for (const [field, name] of Object.entries(ENGINE_VARIABLES)) {
    const value = e[name];
    if (value !== undefined) input[field] = value;
  }
  try {
    return parseEngineConfig(input);
  } catch (error) {
    // Name the variable, not the engine's field.
    let message = (error as Error).message;
    for (const [field, name] of Object.entries(ENGINE_VARIABLES)) message = message.replaceAll(field, name);
    throw new ConfigError(message);
  }
}

/**
 * Validates a set of variables (process.env at start-up; tests build their own). A server also
 * needs what only it uses: the database.
 */
export function loadConfig(source: Record<string, string | undefined>, options: { role?: ConfigRole } = {}): AppConfig {
  // An empty value is an unset one ("FOO= npm start"), as shells and .env files mean it.
  const present = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw new ConfigError(`invalid configuration: ${z.prettifyError(parsed.error)}`);
  const e = parsed.data;
  const demo = e.DEMO_MODE === undefined ? e.NODE_ENV === "development" : e.DEMO_MODE === "1" || e.DEMO_MODE === "true";
  if (e.ONCE_BENCH_CONTROL === "1" && !demo) {
    throw new ConfigError("invalid configuration: ONCE_BENCH_CONTROL=1 needs DEMO_MODE=1 (it serves a mutation without idempotency)");
  }
  if (options.role === "server") {
    if (!e.DATABASE_URL) throw new ConfigError("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`, or set it to your PostgreSQL");
  }
  let payments: PaymentSettings;
  try {
    payments = paymentSettingsFrom(e, demo);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    nodeEnv: e.NODE_ENV,
    demo,
    database: {
      url: e.DATABASE_URL,
      directUrl: e.DIRECT_DATABASE_URL ?? e.DATABASE_URL,
      preparedStatements: e.DATABASE_PREPARED_STATEMENTS !== undefined ? e.DATABASE_PREPARED_STATEMENTS === "1" : e.DIRECT_DATABASE_URL === undefined,
      providerUrl: e.PROVIDER_DATABASE_URL,
    },
    engine: engineConfigFrom(e),
    payments,
    jobs: { background: e.ONCE_BACKGROUND_JOBS === "1", payments: e.ONCE_PAYMENT_JOBS === "1" },
    manualSignals: e.NEXT_MANUAL_SIG_HANDLE !== undefined,
    http: { host: e.HOST, demoAllowRemote: e.DEMO_ALLOW_REMOTE === "1", trustedProxies: e.TRUSTED_PROXIES },
    demoProcessingDelayMs: e.DEMO_PROCESSING_DELAY_MS,
    benchControl: e.ONCE_BENCH_CONTROL === "1",
    logLevel: e.LOG_LEVEL ?? (e.NODE_ENV === "test" ? "silent" : "info"),
  };
}

/** This process's configuration, from its environment: the one place that reads process.env. */
export function loadProcessConfig(options: { role?: ConfigRole } = {}): AppConfig {
  return loadConfig(process.env, options);
}
