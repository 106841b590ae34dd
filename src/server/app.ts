// The composition root: everything a server process holds for its whole life (pool, Prisma, the
// engine, the payment jobs, metrics), built once from the one configuration; every route, the tRPC
// context and instrumentation get them from this one object. In one global slot, because `next
// build` may copy a module once per route: a module-level singleton existed once per copy (the
// route's had no replay cache while instrumentation's ran the jobs).
import { type AppConfig, loadProcessConfig, type WorkerConfig } from "./config";
import { createDb, POOL_MAX, STORE_WAIT_MS, type Db } from "./db/client";
import { createEngineFor, type Engine } from "./engine";
import { HealthMonitor } from "./health";
import { Admission } from "./edge/admission";
import { apiRoutesFor, type ApiRoutes } from "./edge/api-routes";
import { Refusals, RefusalStage } from "../http/refusals";
import { Waiters } from "./edge/waiters";
import { callerOf } from "./api/context";
import { createJobLog } from "./job-log";
import { logger, setLogLevel } from "./logger";
import { createMetricsRegistry, type MetricsRegistry } from "./metrics";
import { startPaymentJobs, type PaymentDeps } from "@/payments";
import { logReplicationAtStart } from "./replication";
import { Reason } from "@/shared/reasons";

/** `Config`: the server's whole configuration, or the worker's (which has no HTTP settings). */
export interface ServerApp<Config extends WorkerConfig = AppConfig> {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  readonly metrics: MetricsRegistry;
  readonly payments: PaymentDeps;
  /** The bound of API requests this instance works on at once (HTTP_MAX_IN_FLIGHT). */
  readonly admission: Admission;
  /** Requests answered without their work, by reason (/api/metrics, the dashboard). */
  readonly refusals: Refusals;
  /** Duplicates of a request in flight here, waiting on it outside the line (`Prefer: wait`). */
  readonly waiters: Waiters;
  /** The database's state for GET /api/health, kept fresh by one probe loop. */
  readonly health: HealthMonitor;
  /** The API routes' handlers (src/server/edge/api-routes.ts); a worker's app has none. */
  readonly routes?: ApiRoutes;
  /** Starts the engine's jobs (and the payment loops); the stop it returns flushes the counters. */
  startJobs(options: { payments: boolean }): () => Promise<void>;
  /** Stops the health probe and the engine's listener, and closes the pool. */
  close(): Promise<void>;
}

/** Builds a server app; `db` is for tests and tools that made their own client. */
export function createServerApp<Config extends WorkerConfig>(
  config: Config,
  options: { db?: Db } = {},
): ServerApp<Config> {
  setLogLevel(config.logLevel);
  const { url, preparedStatements } = config.database;
  if (!options.db && !url)
    throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`");
  const db = options.db ?? createDb(url!, { preparedStatements });
  const engine = createEngineFor(db, config.engine, { listenUrl: config.database.directUrl });
  const payments: PaymentDeps = { db, engine, settings: config.payments, logger };
  const refusals = new Refusals();
  const admission = admissionFor(config, refusals);
  const health = new HealthMonitor(db);
  const waiters = new Waiters({
    callerOf: (headers) => callerOf({ db, config }, headers),
    remembers: (scope, key) => engine.remembers(scope, key),
    leaseMs: engine.config.leaseMs,
    minRetryAfterSeconds: engine.config.minRetryAfterSeconds,
  });
  const parts = { config, db, engine, payments, admission, refusals, health, waiters };
  return {
    ...parts,
    metrics: createMetricsRegistry(db, engine, refusals, waiters),
    ...(isServerConfig(config) ? { routes: apiRoutesFor({ ...parts, config }) } : {}),
    startJobs: (jobs) => startJobs(payments, health, jobs.payments),
    async close() {
      health.stop();
      await engine.close();
      await db.$disconnect();
    },
  };
}

/** A server's configuration has HTTP settings; a worker's has none. */
function isServerConfig(config: WorkerConfig): config is AppConfig {
  return "http" in config;
}

/**
 * Four requests per pool connection always get in (enough to keep the pool busy); past that, as
 * many as finish within the store's wait, up to HTTP_MAX_IN_FLIGHT. A worker's configuration has
 * no HTTP settings: it serves no API request, so no bound.
 */
function admissionFor(config: WorkerConfig, refusals: Refusals): Admission {
  if (!isServerConfig(config)) return new Admission({ served: Number.POSITIVE_INFINITY });
  const { maxInFlight } = config.http;
  return new Admission({
    served: Math.min(4 * POOL_MAX, maxInFlight),
    ceiling: maxInFlight,
    waitMs: STORE_WAIT_MS,
    onRefuse: (when) =>
      refusals.count(
        Reason.STORE_BUSY,
        when === "deadline" ? RefusalStage.QUEUE : RefusalStage.ADMISSION,
      ),
  });
}

/** ServerApp.startJobs: the engine's jobs, and the payment loops when `runPayments`. */
function startJobs(
  payments: PaymentDeps,
  health: HealthMonitor,
  runPayments: boolean,
): () => Promise<void> {
  const { db, engine } = payments;
  // One line per state change while the database is down, not two stacks a second (job-log.ts).
  const jobLog = createJobLog(health, (line) => logger.warn(line));
  // Whether an answer survives a failover of the database: said once at start (then in metrics).
  void logReplicationAtStart(db, { info: (m) => logger.info(m), warn: (m) => logger.warn(m) });
  const stopEngineJobs = engine.startJobs(jobLog.failed);
  const stopPayments = runPayments ? startPaymentJobs(payments, { log: jobLog }) : async () => {};
  return async () => {
    await stopPayments();
    await stopEngineJobs(); // flushes the counters one last time
    jobLog.stop();
  };
}

const SLOT = Symbol.for("once.serverApp");
const slot = globalThis as unknown as Record<typeof SLOT, ServerApp | undefined>;

/**
 * The process's one app, made on first use from the process's configuration (instrumentation
 * makes it at start-up, so a bad configuration stops the server before its first request).
 */
export function serverApp(): ServerApp {
  return (slot[SLOT] ??= createServerApp(loadProcessConfig({ role: "server" })));
}
