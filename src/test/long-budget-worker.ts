// `npm run worker` (scripts/lib/worker.ts) whose reconciliation run may read 1 120 pages for up to
// 10 minutes: the memory attack test (src/payments/reconciliation-memory.test.ts) needs a run the
// page budget stops after just over 1 000 pages of a list that never ends, not the clock.
import { DEFAULT_RECONCILE_BUDGET } from "../payments/config";
import { runWorker } from "../../scripts/lib/worker";

runWorker({ reconcileBudget: { ...DEFAULT_RECONCILE_BUDGET, maxPages: 1_120, maxRunMs: 600_000 } });
