// `npm run worker`: the payment outbox worker and reconciliation as a process of its own (beside
// servers started with ONCE_PAYMENT_JOBS=0, or as an extra worker), against DATABASE_URL (or the
// running embedded database), until SIGINT/SIGTERM. Any number may run beside the server's own
// loops: rows are claimed with FOR UPDATE SKIP LOCKED under a lease. A database that goes away is
// waited for (each loop backs off, the job log says so once), never a reason to exit.
//
// ONCE_TEST_CRASH_AFTER_CHARGE=1 makes the process kill itself (SIGKILL: no cleanup, no finally)
// right after the provider charged and before the row is marked delivered: the crash test's
// worst moment, produced for real.
import { createServerApp } from "../src/server/app";
import { loadWorkerConfig } from "../src/server/config";
import { createJobLog } from "../src/server/job-log";
import { startPaymentJobs } from "../src/payments";
import { resolveDatabaseUrl, resolveProviderUrl } from "../tools/db/url";
import { configOrExit } from "./lib/config";

// The database, the engine's and the payments' variables: the server's own (HOST, TRUSTED_PROXIES,
// …) are not its business.
const config = configOrExit("worker", () => loadWorkerConfig(process.env));
// The server's own composition root (database, engine); this process runs only its payment loops,
// against PAYMENTS_PROVIDER_URL or the provider the running app started.
const app = createServerApp({
  ...config,
  database: { ...config.database, url: resolveDatabaseUrl() },
  payments: { ...config.payments, providerUrl: resolveProviderUrl(config.payments.providerUrl) },
});
const { db } = app;
// Once running, an outage is a state, not an error per round: one line when the database goes
// away, one when it is back (src/server/job-log.ts).
const jobLog = createJobLog(db, (line) => console.warn(line));
const crashAfterCharge = process.env.ONCE_TEST_CRASH_AFTER_CHARGE === "1";

const stopJobs = startPaymentJobs(app.payments, {
  log: jobLog,
  hooks: crashAfterCharge
    ? {
        afterCharge: (message, charge) => {
          console.warn(`[worker] crashing after charge ${charge.id} for outbox row ${message.id}`);
          process.kill(process.pid, "SIGKILL");
        },
      }
    : undefined,
});
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
