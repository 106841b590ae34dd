// The configuration: one zod schema per command, composed of sections, each variable declared once.
// A process parses its own at start-up (`loadConfig` for the server, `load<Command>Config` for the
// others) and passes it down. Nothing else in src/ or packages/ reads process.env: a typo stops the
// process with one sentence naming the variable before it listens, instead of failing a request
// later; and a variable a command does not read cannot stop it.
import { parseEngineConfig } from "@once/idempotency/config";
import { z } from "zod";
import { paymentEnvShape, paymentSettingsFrom, providerSecretKeyFrom } from "@/payments/config";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const flag = z.enum(["0", "1"]);

// The engine's tunables an operator sets: IDEMPOTENCY_ and the EngineConfig field in upper snake
// case (IDEMPOTENCY_LEASE_MS sets leaseMs). The others keep their defaults, each with its reason
// (packages/idempotency/src/config.ts, which validates these again); the engine reads no env.
const engineVariable = z.coerce.number().int().optional();
const engineSection = {
  IDEMPOTENCY_LEASE_MS: engineVariable,
  IDEMPOTENCY_TTL_SECONDS: engineVariable,
  IDEMPOTENCY_MAX_LIVE_KEYS: engineVariable,
  IDEMPOTENCY_COUNTER_FLUSH_MS: engineVariable,
  IDEMPOTENCY_MAX_WAIT_MS: engineVariable,
};
type EngineVariable = keyof typeof engineSection;
const ENGINE_VARIABLES = Object.keys(engineSection) as EngineVariable[];
/** IDEMPOTENCY_MAX_LIVE_KEYS → maxLiveKeys. */
const engineField = (name: EngineVariable) =>
  name
    .replace(/^IDEMPOTENCY_/, "")
    .toLowerCase()
    .replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

// Sections: the variables of one concern. A command validates only the sections it reads, so a
// deploy that migrates (`npm run db:setup`) before the app's secrets exist can.

const modeSection = {
  // No default: a tool started without NODE_ENV (db:setup, the users CLI) is not "development".
  NODE_ENV: z.enum(["development", "production", "test"]).optional(),
  // Demo mode opens doors on purpose (one-click demo accounts, demo API tokens, x-demo-delay-ms):
  // only `DEMO_MODE=1`, or `next dev`, turns it on; a production build and the tools have it off.
  DEMO_MODE: z.enum(["0", "1", "true", "false"]).optional(),
};

// A module of lab/ whose routes the front door serves beside the app's (scripts/front-door.ts,
// `npm start` only). Routes from outside the app are a door, so only demo mode may open it.
const labSection = { ONCE_LAB_ROUTES: z.string().trim().min(1).optional() };

/** A PostgreSQL connection string; anything else would fail later, in the driver, as a stack. */
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/, error: "must be a postgresql:// URL" });

const databaseSection = {
  // Unset: the server refuses to start (npm run dev/start set it to the embedded PostgreSQL).
  DATABASE_URL: postgresUrl.optional(),
  // Behind a transaction-mode pooler (PgBouncer), DATABASE_URL is the pooler and this is
  // PostgreSQL itself, for what needs a session (LISTEN, migrations).
  DIRECT_DATABASE_URL: postgresUrl.optional(),
  // Prepared statements halve a reservation's cost. Unset: on, unless DIRECT_DATABASE_URL says
  // DATABASE_URL is a pooler; one that keeps them (PgBouncer 1.21+, max_prepared_statements): "1".
  DATABASE_PREPARED_STATEMENTS: flag.optional(),
};

/** What only the HTTP server reads: where it listens, whom it believes, what runs beside it. */
const serverSection = {
  // Unset: 127.0.0.1 for `npm run dev` and any demo (demo mode's doors must not face a network by
  // accident); 0.0.0.0 for a production `npm start` (scripts/lib/listen-address.ts).
  HOST: z.string().trim().min(1).optional(),
  // "1": demo mode may listen on an address other machines reach (a shared demo box).
  DEMO_ALLOW_REMOTE: flag.default("0"),
  // Proxies in front, each appending to X-Forwarded-For/-Host (src/http/forwarded.ts). 0: neither
  // is believed (a client writes what it likes there: a rotated one was a fresh sign-in budget).
  TRUSTED_PROXIES: intFrom(0),
  // API requests one instance works on at once; past it, 503 store_busy (server/edge/admission.ts).
  HTTP_MAX_IN_FLIGHT: intFrom(160, 1),
  // Connections one peer address may hold open (src/server/edge/peer-connections.ts). 0: no cap,
  // as behind a proxy or a shared NAT address must be.
  HTTP_MAX_CONNECTIONS_PER_PEER: intFrom(0),
  ...labSection,
  // "0": an instance that only serves requests (no reaper, sweeper, counter flush, payment loops).
  ONCE_BACKGROUND_JOBS: flag.default("1"),
  // "0": no payment loops here (`npm run worker` runs them, off the server's one thread); the
  // engine's own jobs stay, since the counters live in the server's memory.
  ONCE_PAYMENT_JOBS: flag.default("1"),
  // Next.js's switch: set, `next start` leaves SIGTERM/SIGINT to us, so the server stops its jobs
  // and flushes its counters before it exits (src/instrumentation.ts).
  NEXT_MANUAL_SIG_HANDLE: z.string().optional(),
};

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
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  ...databaseSection,
  ...engineSection,
  ...paymentEnvShape,
});
/** The server (`npm run dev`, `npm start`, `next start`): everything. */
const serverSchema = workerSchema.extend(serverSection);

export type DatabaseConfig = ReturnType<typeof databaseFrom>;
/** What a process running the engine and the payments reads (the worker; the server adds more). */
export type WorkerConfig = ReturnType<typeof workerFrom>;
export type AppConfig = ReturnType<typeof loadConfig>;

/** Thrown for a missing or invalid variable: its message is the one sentence a process prints. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** `read()`, its failure turned into a ConfigError with the same sentence. */
function orConfigError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
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
    if (message.startsWith(name)) return message;
    return /^[a-z]/.test(message) ? `${name} ${message}` : `${name}: ${message}`;
  });
  throw new ConfigError(`invalid configuration: ${issues.join("; ")}`);
}

function demoFrom(e: z.output<typeof labSchema>): boolean {
  return e.DEMO_MODE === undefined
    ? e.NODE_ENV === "development"
    : e.DEMO_MODE === "1" || e.DEMO_MODE === "true";
}

function databaseFrom(e: z.output<typeof databaseSchema>) {
  return {
    url: e.DATABASE_URL,
    /** PostgreSQL itself, for LISTEN and migrations: DIRECT_DATABASE_URL, or DATABASE_URL. */
    directUrl: e.DIRECT_DATABASE_URL ?? e.DATABASE_URL,
    preparedStatements:
      e.DATABASE_PREPARED_STATEMENTS !== undefined
        ? e.DATABASE_PREPARED_STATEMENTS === "1"
        : e.DIRECT_DATABASE_URL === undefined,
  };
}

function engineConfigFrom(e: z.output<typeof workerSchema>) {
  const input: Record<string, number> = {};
  for (const name of ENGINE_VARIABLES) {
    const value = e[name];
    if (value !== undefined) input[engineField(name)] = value;
  }
  try {
    return parseEngineConfig(input);
  } catch (error) {
    // Name the variable, not the engine's field, on one line (zod's message is two per issue).
    let message = (error as Error).message;
    for (const name of ENGINE_VARIABLES) message = message.replaceAll(engineField(name), name);
    throw new ConfigError(message.replace(/\s*\n\s*/g, " "));
  }
}

function workerFrom(e: z.output<typeof workerSchema>) {
  const demo = demoFrom(e);
  return {
    nodeEnv: e.NODE_ENV,
    /** Whether the demo doors are open: DEMO_MODE, or `next dev`. */
    demo,
    database: databaseFrom(e),
    engine: engineConfigFrom(e),
    payments: orConfigError(() => paymentSettingsFrom(e, demo)),
    logLevel: e.LOG_LEVEL ?? (e.NODE_ENV === "test" ? "silent" : "info"),
  };
}

/** `npm run users`: the database settings (the URL may be unset: the running app's). */
export function loadDatabaseConfig(source: Record<string, string | undefined>): DatabaseConfig {
  return databaseFrom(parse(databaseSchema, source));
}

/** `npm run reconcile`: the database, the provider's API and its key (unset: the running app's). */
export function loadReconcileConfig(source: Record<string, string | undefined>) {
  const e = parse(reconcileSchema, source);
  const demo = demoFrom(e);
  const key = e.PAYMENTS_PROVIDER_SECRET_KEY;
  return {
    demo,
    database: databaseFrom(e),
    providerUrl: e.PAYMENTS_PROVIDER_URL,
    providerSecretKey:
      key === undefined ? undefined : orConfigError(() => providerSecretKeyFrom(key, demo)),
  };
}

/** `npm run db:setup`: the database to migrate and seed (required); whether to seed demo rows. */
export function loadSetupConfig(source: Record<string, string | undefined>) {
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

/** The server's configuration (process.env at start-up; tests build their own). */
export function loadConfig(
  source: Record<string, string | undefined>,
  options: { role?: "server" | "tool" } = {},
) {
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
    /** Whether this process, not Next.js, handles SIGTERM/SIGINT (NEXT_MANUAL_SIG_HANDLE). */
    manualSignals: e.NEXT_MANUAL_SIG_HANDLE !== undefined,
    http: {
      host: e.HOST,
      demoAllowRemote: e.DEMO_ALLOW_REMOTE === "1",
      trustedProxies: e.TRUSTED_PROXIES,
      maxInFlight: e.HTTP_MAX_IN_FLIGHT,
      /** Connections one peer address may hold open at once; 0: no cap. */
      maxConnectionsPerPeer: e.HTTP_MAX_CONNECTIONS_PER_PEER,
    },
  };
}

/** The front door's lab module (ONCE_LAB_ROUTES); outside demo mode a ConfigError. */
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

/** The server process's configuration from its environment: the one reader of process.env. */
export function loadProcessConfig(options: { role?: "server" | "tool" } = {}): AppConfig {
  return loadConfig(process.env, options);
}
