// `npm run worker`: the payment outbox worker and reconciliation as a process of its own (beside
// servers started with ONCE_PAYMENT_JOBS=0, or as an extra worker), against DATABASE_URL (or the
// running embedded database), until SIGINT/SIGTERM. Any number may run beside the server's own
// loops: rows are claimed with FOR UPDATE SKIP LOCKED under a lease. A database that goes away is
// waited for (each loop backs off, the job log says so once), never a reason to exit.
import { runWorker } from "./lib/worker";

runWorker();
