// The configuration: one zod schema per command, composed of sections (the database, the engine,
// the payments, the server), each variable declared once. A process parses its own at start-up
// (`loadConfig` for the server, `loadWorkerConfig`, `loadSetupConfig`, `loadReconcileConfig`,
// `loadDatabaseConfig` for the commands) and passes it down; the server's goes through the
// composition root (src/server/app.ts). Nothing else in src/ or packages/ reads process.env: a typo
// in a variable stops the process with one sentence naming it, before it listens, instead of
// failing a request later; and a variable a command does not read cannot stop it.
import { parseEngineConfig, type EngineConfig } from "@once/idempotency/config";
import { z } from "zod";
import {
  paymentEnvShape,
  paymentSettingsFrom,
  providerSecretKeyFrom,
  type PaymentSettings,
} from "@/payments/config";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const flag = z.enum(["0", "1"]);

// The engine's tunables an operator sets, each IDEMPOTENCY_ and the EngineConfig field it sets in
// upper snake case (IDEMPOTENCY_LEASE_MS sets leaseMs); the engine's other tunables keep their
// defaults, each with its reason (packages/idempotency/src/config.ts), which validates these again.
// The engine itself reads no environment.
const engineVariable = z.coerce.number().int().optional();
const engineSection = {
  IDEMPOTENCY_LEASE_MS: engineVariable,
  IDEMPOTENCY_TTL_SECONDS: engineVariable,
  IDEMPOTENCY_MAX_LIVE_KEYS: engineVariable,
  IDEMPOTENCY_MAX_STORED_BODY_BYTES: engineVariable,
  IDEMPOTENCY_COUNTER_FLUSH_MS: engineVariable,
  IDEMPOTENCY_MAX_WAIT_MS: engineVariable,
};
type EngineVariable = keyof typeof engineSection;
/** IDEMPOTENCY_MAX_LIVE_KEYS → maxLiveKeys. */
const engineField = (name: EngineVariable) =>
  name
    .replace(/^IDEMPOTENCY_/, "")
    .toLowerCase()
    .replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

// ---------------------------------------------------------------------------------------------
// Sections: the variables of one concern. Each command's schema is the sections it uses (below),
// so a command validates only what it reads: `npm run db:setup` needs a database URL, not the
// webhook's secret, and a deploy that migrates before the app's secrets exist can.

/** Whether the demo doors are open: read by everything that seeds, signs in or charges. */
const modeSection = {
  // No default: a tool started without NODE_ENV (db:setup, the users CLI) is not "development".
  NODE_ENV: z.enum(["development", "production", "test"]).optional(),
  // Demo mode opens doors on purpose: one-click demo accounts, the demo API tokens, and a slow
  // request on ask (header x-demo-delay-ms). Only `DEMO_MODE=1`, or `next dev`
  // (NODE_ENV=development), turns it on; a production build, db:setup and the CLI tools have it off
  // unless told.
  DEMO_MODE: z.enum(["0", "1", "true", "false"]).optional(),
};

// A module of lab/ whose routes the front door serves beside the app's (scripts/front-door.ts,
// `npm start` only): the benches' code, which the app's build never holds. Routes from outside the
// app are a door (a mutation without idempotency, say), so only demo mode may open it.
const labSection = {
  ONCE_LAB_ROUTES: z.string().trim().min(1).optional(),
};

const logSection = {
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
};

/**
 * A PostgreSQL connection string; anything else would fail later, in the driver, as a stack trace.
 */
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/, error: "must be a postgresql:// URL" });

const databaseSection = {
  // Unset: the server refuses to start (npm run dev/start set it to the embedded PostgreSQL).
  DATABASE_URL: postgresUrl.optional(),
  // Behind a transaction-mode pooler (PgBouncer), DATABASE_URL is the pooler and this is
  // PostgreSQL itself, for what needs a session (LISTEN, migrations).
  DIRECT_DATABASE_URL: postgresUrl.optional(),
  // Prepared statements: each statement is parsed and planned once per connection instead of on
  // every call (a reservation costs half). Unset: on, unless DIRECT_DATABASE_URL says DATABASE_URL
  // is a pooler; a pooler that keeps prepared statements (PgBouncer 1.21+ with
  // max_prepared_statements) may turn them back on with "1".
  DATABASE_PREPARED_STATEMENTS: flag.optional(),
};

const paymentsSection = {
  ...paymentEnvShape,
};

/**
 * What only the HTTP server reads: where it listens, whom it believes, what it runs beside
 * requests.
 */
const serverSection = {
  // Where `npm run dev` / `npm start` listen (scripts/lib/listen-address.ts). Unset: 127.0.0.1 for
  // `npm run dev` and for any demo, because demo mode's doors (one-click operator, published
  // tokens) must not face a network by accident; a production `npm start` serves 0.0.0.0.
  HOST: z.string().trim().min(1).optional(),
  // "1": demo mode may listen on an address other machines reach (a shared demo box). Off by
  // default, so a HOST=0.0.0.0 left in a shell does not publish the operator's one-click sign-in.
  DEMO_ALLOW_REMOTE: flag.default("0"),
  // How many proxies stand in front of the app, each appending what it saw to X-Forwarded-For and
  // X-Forwarded-Host (src/http/forwarded.ts). 0 by default: neither header is believed, the
  // socket's peer is the client and Host is the site, because on a server reached directly a
  // client writes whatever it likes there (rotating X-Forwarded-For handed out a fresh sign-in
  // budget per request). Behind HAProxy with `option forwardfor`: 1.
  TRUSTED_PROXIES: intFrom(0),
  // API requests one instance works on at most at once; past it, 503 store_busy at once
  // (src/server/edge/admission.ts). Below it the bound follows what the instance finishes within
  // the store's wait; 40 (or this, if lower) always get in.
  HTTP_MAX_IN_FLIGHT: intFrom(160, 1),
  // Connections one peer address may hold open at once; past it a new one is closed on accept
  // (src/server/edge/peer-connections.ts). 0 (the default): no cap, as behind a proxy (every
  // connection is the proxy's) or where many clients share one NAT address must be.
  HTTP_MAX_CONNECTIONS_PER_PEER: intFrom(0),
  ...labSection,
  // "0": an instance that only serves requests (no reaper, sweeper, counter flush, payment loops).
  ONCE_BACKGROUND_JOBS: flag.default("1"),
  // "0": this server runs no payment loops (outbox worker, reconciliation);
  // `npm run worker` runs them in a process of its own, so their CPU does not queue behind
  // requests on the server's one thread. The engine's own jobs (reaper, sweeper, counter flush)
  // stay: the counters live in the server's memory.
  ONCE_PAYMENT_JOBS: flag.default("1"),
  // Next.js's own switch: set, `next start` leaves SIGTERM/SIGINT to us, so the server stops its
  // jobs and flushes its counters before it exits (npm start sets it; see src/instrumentation.ts).
  NEXT_MANUAL_SIG_HANDLE: z.string().optional(),
};

// The commands' schemas, each the sections it reads.
/** `npm run users`: a database, nothing else. */
const databaseSchema = z.object(databaseSection);
/** `npm run reconcile`: the database and the provider's list API (and the shop's key for it). */
const reconcileSchema = z.object({
  ...modeSection,
  ...databaseSection,
  PAYMENTS_PROVIDER_URL: paymentEnvShape.PAYMENTS_PROVIDER_URL,
  PAYMENTS_PROVIDER_SECRET_KEY: paymentEnvShape.PAYMENTS_PROVIDER_SECRET_KEY,
});
/** The front door (scripts/front-door.ts): whether it serves a lab module's routes. */
const labSchema = z.object({ ...modeSection, ...labSection });
/** `npm run db:setup`: the database, and whether to seed the demo rows. */
const setupSchema = z.object({ ...modeSection, ...databaseSection });
/** `npm run worker`: the payment loops, with the engine that keys the provider's webhooks. */
const workerSchema = z.object({
  ...modeSection,
  ...logSection,
  ...databaseSection,
  ...engineSection,
  ...paymentsSection,
});
/** The server (`npm run dev`, `npm start`, `next start`): everything. */
const serverSchema = workerSchema.extend(serverSection);

export interface DatabaseConfig {
  url: string | undefined;
  /** PostgreSQL itself, for LISTEN and migrations: DIRECT_DATABASE_URL, or DATABASE_URL. */
  directUrl: string | undefined;
  preparedStatements: boolean;
}

export interface SetupConfig {
  /** Seed the demo accounts and tokens. */
  demo: boolean;
  database: DatabaseConfig & { url: string };
}

/**
 * What a process that runs the engine and the payments reads (the worker; the server adds its own).
 */
export interface WorkerConfig {
  nodeEnv: "development" | "production" | "test" | undefined;
  /** Whether the demo doors are open: DEMO_MODE, or `next dev`. */
  demo: boolean;
  database: DatabaseConfig;
  engine: EngineConfig;
  payments: PaymentSettings;
  logLevel: NonNullable<z.infer<typeof workerSchema>["LOG_LEVEL"]>;
}

/** The server's configuration: the worker's, and what only the HTTP server reads. */
export interface AppConfig extends WorkerConfig {
  jobs: { background: boolean; payments: boolean };
  /** Whether this process, not Next.js, handles SIGTERM/SIGINT (NEXT_MANUAL_SIG_HANDLE). */
  manualSignals: boolean;
  /**
   * Where the server listens, whom it believes about the client's address and the host, and how
   * many requests it works on at once.
   */
  http: {
    host: string | undefined;
    demoAllowRemote: boolean;
    trustedProxies: number;
    maxInFlight: number;
    /** Connections one peer address may hold open at once; 0: no cap. */
    maxConnectionsPerPeer: number;
  };
}

export type ConfigRole = "server" | "tool";

/** Thrown for a missing or invalid variable: its message is the one sentence a process prints. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The variables `schema` reads, parsed; one sentence naming each bad one otherwise. */
function parse<S extends z.ZodType>(
  schema: S,
  source: Record<string, string | undefined>,
): z.output<S> {
  // An empty value is an unset one ("FOO= npm start"), as shells and .env files mean it.
  const present = Object.fromEntries(
    Object.entries(source).filter(([, v]) => v !== undefined && v !== ""),
  );
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  // One line, each variable named once; never its value (it may be a secret). Our own messages
  // continue the name ("DATABASE_URL must be …") or hold it already; zod's own follow a colon.
  const issues = parsed.error.issues.map(({ path, message }) => {
    const name = path.join(".");
    return message.startsWith(name)
      ? message
      : /^[a-z]/.test(message)
        ? `${name} ${message}`
        : `${name}: ${message}`;
  });
  throw new ConfigError(`invalid configuration: ${issues.join("; ")}`);
}

function demoFrom(e: z.output<z.ZodObject<typeof modeSection>>): boolean {
  return e.DEMO_MODE === undefined
    ? e.NODE_ENV === "development"
    : e.DEMO_MODE === "1" || e.DEMO_MODE === "true";
}

function databaseFrom(e: z.output<typeof databaseSchema>): DatabaseConfig {
  return {
    url: e.DATABASE_URL,
    directUrl: e.DIRECT_DATABASE_URL ?? e.DATABASE_URL,
    preparedStatements:
      e.DATABASE_PREPARED_STATEMENTS !== undefined
        ? e.DATABASE_PREPARED_STATEMENTS === "1"
        : e.DIRECT_DATABASE_URL === undefined,
  };
}

function engineConfigFrom(e: z.output<typeof workerSchema>): EngineConfig {
  const input: Record<string, number> = {};
  for (const name of Object.keys(engineSection) as EngineVariable[]) {
    const value = e[name];
    if (value !== undefined) input[engineField(name)] = value;
  }
  try {
    return parseEngineConfig(input);
  } catch (error) {
    // Name the variable, not the engine's field, on one line (the engine's message is zod's, two
    // lines per issue).
    let message = (error as Error).message;
    for (const name of Object.keys(engineSection) as EngineVariable[])
      message = message.replaceAll(engineField(name), name);
    throw new ConfigError(message.replace(/\s*\n\s*/g, " "));
  }
}

function workerFrom(e: z.output<typeof workerSchema>): WorkerConfig {
  const demo = demoFrom(e);
  let payments: PaymentSettings;
  try {
    payments = paymentSettingsFrom(e, demo);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    nodeEnv: e.NODE_ENV,
    demo,
    database: databaseFrom(e),
    engine: engineConfigFrom(e),
    payments,
    logLevel: e.LOG_LEVEL ?? (e.NODE_ENV === "test" ? "silent" : "info"),
  };
}

/** `npm run users`: the database settings (the URL may be unset: the running app's). */
export function loadDatabaseConfig(source: Record<string, string | undefined>): DatabaseConfig {
  return databaseFrom(parse(databaseSchema, source));
}

/**
 * `npm run reconcile`: the database settings, the provider's API and the shop's key for it (each
 * may be unset: the running app's).
 */
export function loadReconcileConfig(source: Record<string, string | undefined>): {
  database: DatabaseConfig;
  providerUrl: string | undefined;
  /** As configured (may be unset: the running app's key, or the demo key in demo mode). */
  providerSecretKey: string | undefined;
  demo: boolean;
} {
  const e = parse(reconcileSchema, source);
  const demo = demoFrom(e);
  let providerSecretKey: string | undefined;
  try {
    if (e.PAYMENTS_PROVIDER_SECRET_KEY !== undefined)
      providerSecretKey = providerSecretKeyFrom(e.PAYMENTS_PROVIDER_SECRET_KEY, demo);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    demo,
    database: databaseFrom(e),
    providerUrl: e.PAYMENTS_PROVIDER_URL,
    providerSecretKey,
  };
}

/**
 * `npm run db:setup`: the database to migrate and seed (required), and whether to seed the demo
 * rows.
 */
export function loadSetupConfig(source: Record<string, string | undefined>): SetupConfig {
  const e = parse(setupSchema, source);
  const database = databaseFrom(e);
  if (!database.url) {
    throw new ConfigError(
      "DATABASE_URL is not set: `npm run db:setup` prepares your own PostgreSQL (`npm run dev` sets up the embedded one by itself).",
    );
  }
  return { demo: demoFrom(e), database: { ...database, url: database.url } };
}

/** `npm run worker`: the database, the engine's settings and the payments'. */
export function loadWorkerConfig(source: Record<string, string | undefined>): WorkerConfig {
  return workerFrom(parse(workerSchema, source));
}

/**
 * The server's configuration (process.env at start-up; tests build their own). A server also
 * needs what only it uses: the database.
 */
export function loadConfig(
  source: Record<string, string | undefined>,
  options: { role?: ConfigRole } = {},
): AppConfig {
  const e = parse(serverSchema, source);
  labRoutesFrom(e);
  const worker = workerFrom(e);
  if (options.role === "server" && !worker.database.url) {
    throw new ConfigError(
      "DATABASE_URL is not set: start the app with `npm run dev` or `npm start`, or set it to your PostgreSQL",
    );
  }
  return {
    ...worker,
    jobs: { background: e.ONCE_BACKGROUND_JOBS === "1", payments: e.ONCE_PAYMENT_JOBS === "1" },
    manualSignals: e.NEXT_MANUAL_SIG_HANDLE !== undefined,
    http: {
      host: e.HOST,
      demoAllowRemote: e.DEMO_ALLOW_REMOTE === "1",
      trustedProxies: e.TRUSTED_PROXIES,
      maxInFlight: e.HTTP_MAX_IN_FLIGHT,
      maxConnectionsPerPeer: e.HTTP_MAX_CONNECTIONS_PER_PEER,
    },
  };
}

/**
 * The front door's lab module (ONCE_LAB_ROUTES), as the path given, or undefined; outside demo mode
 * a ConfigError, so a production server that was handed one refuses to start.
 */
export function loadLabRoutesConfig(
  source: Record<string, string | undefined>,
): string | undefined {
  return labRoutesFrom(parse(labSchema, source));
}

function labRoutesFrom(e: z.output<typeof labSchema>): string | undefined {
  if (e.ONCE_LAB_ROUTES !== undefined && !demoFrom(e))
    throw new ConfigError(
      "invalid configuration: ONCE_LAB_ROUTES needs DEMO_MODE=1 (it serves routes from outside the app, such as a mutation without idempotency)",
    );
  return e.ONCE_LAB_ROUTES;
}

/**
 * The server process's configuration, from its environment: the one place that reads process.env.
 */
export function loadProcessConfig(options: { role?: ConfigRole } = {}): AppConfig {
  return loadConfig(process.env, options);
}
