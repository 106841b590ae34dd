// Background jobs of the server process (started from src/instrumentation.ts): the engine's
// reaper, sweeper and counter flush, and the payment jobs. Every job guards itself (advisory lock
// or SKIP LOCKED), so any number of instances may run them.
import { createDb, type Db } from "./db/client";
import { engineFor } from "./engine";
import { appEngineConfig } from "./engine-config";
import { benchControlEnabled, env } from "./env";
import { createJobLog } from "./job-log";
import { logger } from "./logger";
import { startPaymentJobs } from "./payments";
import { paymentSettings } from "./payments/config";
import { logReplicationAtStart } from "./replication";

export function startBackgroundJobs(db: Db): () => Promise<void> {
  // One line per state change while the database is down, not two stacks a second (job-log.ts).
  const jobLog = createJobLog(db, (line) => logger.warn(line));
  const log = jobLog.log;
  const engine = engineFor(db);
  // Whether an answer survives a failover of the database: said once at start (then in /api/metrics).
  void logReplicationAtStart(db, { info: (m) => logger.info(m), warn: (m) => logger.warn(m) });
  const stops: (() => Promise<void> | void)[] = [
    engine.startJobs((job, error) => log(`[${job}] ${error.message}`)),
    () => engine.close(),
    // Outbox worker, the simulated provider's webhook deliveries, reconciliation (unless a
    // process of their own runs them: ONCE_PAYMENT_JOBS=0 and `npm run worker`).
    env().ONCE_PAYMENT_JOBS === "1" ? startPaymentJobsWithBooks(db, log) : () => {},
    jobLog.stop,
  ];
  return async () => {
    for (const stop of stops) await stop();
  };
}

/** The payment jobs, with the provider's own books when PROVIDER_DATABASE_URL names them. */
function startPaymentJobsWithBooks(db: Db, log: (m: string) => void): () => Promise<void> {
  const url = env().PROVIDER_DATABASE_URL;
  const books = url ? createDb(url, { max: 4 }) : undefined;
  const stop = startPaymentJobs(db, { log, books });
  return async () => {
    await stop();
    await books?.$disconnect();
  };
}

/**
 * Every setting of the app, the engine and the payment jobs, validated at once: a typo in a
 * variable stops the server at start-up with a clear message instead of failing a request later.
 */
export function checkConfiguration(): void {
  env();
  benchControlEnabled();
  appEngineConfig();
  paymentSettings();
}

/** For the server process: start the jobs, and stop them (flushing the counters) on SIGTERM/SIGINT. */
export function startBackgroundJobsUntilExit(db: Db): void {
  const stop = startBackgroundJobs(db);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void stop());
  }
}
