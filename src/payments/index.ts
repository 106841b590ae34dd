// Payments: the provider's HTTP client, the outbox worker, webhook handling, reconciliation, and
// the loops that schedule them in the server process and in `npm run worker`.
import type { Db } from "../server/db/client";
import type { Engine } from "../server/engine";
import type { JobLog } from "../server/job-log";
import type { PaymentSettings } from "./config";
import { startLoop, type Loop } from "./loop";
import { logger as processLogger } from "../server/logger";
import { createOutboxWorker, type OutboxWorkerOptions, type WorkerLogger } from "./outbox-worker";
import { createProviderClient, type PaymentProvider } from "./provider";
import { budgetLine, createReconciliation } from "./reconciliation";

export { createOutboxWorker, type OutboxWorker, type OutboxRunResult } from "./outbox-worker";
export {
  createProviderClient,
  ProviderTimeoutError,
  ProviderUnavailableError,
  type PaymentProvider,
  type Charge,
} from "./provider";
export { handleProviderWebhook, webhookResponse } from "./webhook";
export {
  createReconciliation,
  FindingKind,
  type Finding,
  type ReconciliationResult,
} from "./reconciliation";
export { startLoop, type Loop } from "./loop";

/** What the payment jobs run on: the process's database, its engine and the validated settings. */
export interface PaymentDeps {
  db: Db;
  engine: Engine;
  settings: PaymentSettings;
}

/**
 * The provider's API as the configuration names it (PAYMENTS_PROVIDER_URL); undefined when it names
 * none.
 */
export function configuredProvider({
  settings,
}: Pick<PaymentDeps, "settings">): PaymentProvider | undefined {
  return settings.providerUrl
    ? createProviderClient(settings.providerUrl, settings.providerSecretKey)
    : undefined;
}

type JobOptions = {
  log?: JobLog;
  hooks?: OutboxWorkerOptions["hooks"];
  /** The payment jobs' logger: the process's pino logger unless a test gives its own. */
  logger?: WorkerLogger;
};

/**
 * Everything payments runs, in the server process or in `npm run worker`: the outbox worker and
 * reconciliation, as loops.
 */
export function startPaymentJobs(deps: PaymentDeps, options: JobOptions = {}): () => Promise<void> {
  const { db, settings } = deps;
  const { log } = options;
  const provider = configuredProvider(deps);
  if (!provider) {
    // Nothing to charge with: the orders wait in the outbox (as they do while the provider is
    // down) for a process that has one. Said once, not per round.
    log?.log(
      "[payments] off: PAYMENTS_PROVIDER_URL is not set, so no payment is charged here and reconciliation does not run",
    );
    return async () => {};
  }
  const worker = createOutboxWorker(db, {
    provider,
    config: settings.outbox,
    hooks: options.hooks,
    logger: options.logger ?? processLogger,
  });
  const loops: Loop[] = [
    startLoop("outbox", () => worker.runOnce(), {
      idleMs: settings.pollMs,
      busy: (r) => r.claimed > 0,
      onError: log?.failed,
    }),
    reconciliationLoop(deps, provider, options),
  ];
  return async () => {
    await Promise.all(loops.map((loop) => loop.stop()));
  };
}

/** The reconciliation job, every RECONCILE_INTERVAL_MS. */
function reconciliationLoop(
  { db, settings }: PaymentDeps,
  provider: PaymentProvider,
  { log, logger }: JobOptions,
): Loop {
  const reconciliation = createReconciliation(db, provider, {
    intervalMs: settings.reconcileIntervalMs,
    budget: settings.reconcileBudget,
    // One structured line per finding recorded, opened again or closed, never one per run.
    logger: logger ?? processLogger,
  });
  return startLoop(
    "reconciliation",
    async () => {
      const result = await reconciliation.runOnce();
      // A run its budget stopped says so (why, what it read, where the next goes on).
      const stopped = budgetLine(result);
      if (stopped) log?.log(stopped);
      return result;
    },
    { idleMs: settings.reconcileIntervalMs, onError: log?.failed },
  );
}
