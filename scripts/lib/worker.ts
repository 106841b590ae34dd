// `npm run worker`'s process (scripts/worker.ts): the payment outbox worker and reconciliation,
// against DATABASE_URL (or the running embedded database), until SIGINT/SIGTERM. `hooks` is for
// the crash test's worker (src/test/crashing-worker.ts), which dies where the test needs it to.
import { createServerApp } from "../../src/server/app";
import { loadWorkerConfig } from "../../src/server/config";
import { createJobLog } from "../../src/server/job-log";
import { startPaymentJobs, type ReconcileBudget } from "../../src/payments";
import { resolveDatabaseUrl, resolveProviderUrl } from "../../tools/db/url";
import { configOrExit } from "./config";

type Hooks = NonNullable<Parameters<typeof startPaymentJobs>[1]>["hooks"];

/** `hooks`, `reconcileBudget`: for the tests' workers (src/test/*-worker.ts). */
export function runWorker(
  options: { hooks?: Hooks; reconcileBudget?: ReconcileBudget } = {},
): void {
  const { hooks, reconcileBudget } = options;
  // The database, the engine's and the payments' variables: the server's own (HOST,
  // TRUSTED_PROXIES, …) are not its business.
  const config = configOrExit("worker", () => loadWorkerConfig(process.env));
  // The server's own composition root (database, engine); this process runs only its payment
  // loops, against PAYMENTS_PROVIDER_URL or the provider the running app started.
  const app = createServerApp({
    ...config,
    database: { ...config.database, url: resolveDatabaseUrl() },
    payments: {
      ...config.payments,
      providerUrl: resolveProviderUrl(config.payments.providerUrl),
      ...(reconcileBudget ? { reconcileBudget } : {}),
    },
  });
  // Once running, an outage is a state, not an error per round: one line when the database goes
  // away, one when it is back (src/server/job-log.ts).
  const jobLog = createJobLog(app.health, (line) => console.warn(line));
  const stopJobs = startPaymentJobs(app.payments, { log: jobLog, hooks });
  console.log(`[worker] running (pid ${process.pid})`);

  let stopping = false;
  async function shutdown(signal: string) {
    if (stopping) return;
    stopping = true;
    console.log(`[worker] ${signal}: finishing the round in progress`);
    await stopJobs();
    jobLog.stop();
    await app.close();
    process.exit(0);
  }
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}
