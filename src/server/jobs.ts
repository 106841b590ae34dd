// Background jobs of the server process (started from src/instrumentation.ts): the engine's
// reaper, sweeper and counter flush, and the payment jobs. Every job guards itself (advisory lock
// or SKIP LOCKED), so any number of instances may run them.
import { poolOf, type Db } from "./db/client";
import { sessionPoolFor } from "./db/session-pool";
import { engineFor } from "./engine";
import { env } from "./env";
import { engineConfigFromEnv, startEngineJobs } from "./idempotency";
import { logger } from "./logger";
import { startPaymentJobs } from "./payments";
import { paymentSettings } from "./payments/config";

export function startBackgroundJobs(db: Db): () => Promise<void> {
  const log = (msg: string) => logger.warn(msg);
  const stops: (() => Promise<void> | void)[] = [
    // The reaper's session lock needs a session: behind PgBouncer, DATABASE_DIRECT_URL gives it one.
    startEngineJobs(db, engineFor(db).counters, log, sessionPoolFor(process.env.DATABASE_DIRECT_URL) ?? poolOf(db)),
    // Outbox worker, the simulated provider's webhook deliveries, reconciliation.
    startPaymentJobs(db, log),
  ];
  return async () => {
    for (const stop of stops) await stop();
  };
}

/**
 * Every setting of the app, the engine and the payment jobs, validated at once: a typo in a
 * variable stops the server at start-up with a clear message instead of failing a request later.
 */
export function checkConfiguration(): void {
  env();
  engineConfigFromEnv();
  paymentSettings();
}

/** For the server process: start the jobs, and stop them (flushing the counters) on SIGTERM/SIGINT. */
export function startBackgroundJobsUntilExit(db: Db): void {
  const stop = startBackgroundJobs(db);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void stop());
  }
}
