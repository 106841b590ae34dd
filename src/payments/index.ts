// Payments: the provider's HTTP client, the outbox worker, webhook handling, reconciliation, and
// the loops that schedule them in the server process and in `npm run worker`.
import type { Db, Engine } from "./db";
import type { PaymentSettings } from "./config";
import type { FindingLogger } from "./books/finding-log";
import { startLoop, type Loop } from "./loop";
import { createOutboxWorker, type OutboxWorkerOptions, type WorkerLogger } from "./outbox-worker";
import { createProviderClient, type PaymentProvider } from "./provider";
import { budgetLine, createReconciliation } from "./reconciliation";

// The one way in: the shop (src/server), the scripts, the benches and the tests outside this folder
// import this file and nothing else of payments (.dependency-cruiser.cjs keeps it so), but for
// config.ts alone where only the configuration is wanted (src/server/config.ts: every command,
// the front door's included, parses it without loading payments).

// The configuration section the shop's one schema composes (src/server/config.ts).
export {
  DEFAULT_OUTBOX_CONFIG,
  DEFAULT_RECONCILE_BUDGET,
  DEMO_PROVIDER_SECRET_KEY,
  DEMO_WEBHOOK_SECRET,
  paymentEnvShape,
  paymentSettingsFrom,
  providerSecretKeyFrom,
  type OutboxConfig,
  type PaymentSettings,
  type ReconcileBudget,
} from "./config";
// The outbox: the row checkout writes in its transaction, and the worker that delivers it.
export { PAYMENT_TOPIC, paymentPayload, providerKeyFor } from "./outbox-message";
export {
  createOutboxWorker,
  type OutboxWorker,
  type OutboxRunResult,
  type WorkerLogger,
} from "./outbox-worker";
// The provider's API as the shop calls it.
export {
  createProviderClient,
  EventType,
  ProviderRefusedError,
  ProviderTimeoutError,
  ProviderUnavailableError,
  type Charge,
  type ListedCharge,
  type PaymentProvider,
} from "./provider";
// The webhook: the route's handler, its path and the provider's signature.
export {
  handleProviderWebhook,
  webhookResponse,
  WEBHOOK_PATH,
  type ProviderEventBody,
  type WebhookDeps,
} from "./webhook";
export { SIGNATURE_HEADER, signatureHeader, verifySignature } from "./webhook-signature";
// Reconciliation and what an operator does about its findings.
export {
  budgetLine,
  createReconciliation,
  FindingKind,
  PENDING_SETTLE_SECONDS,
  type Finding,
  type ReconciliationResult,
} from "./reconciliation";
export { resolveFinding } from "./finding-resolution";
export { startLoop, type Loop } from "./loop";
// The parts the benches time alone (lab/bench/queues.ts, lab/bench/reconcile.ts).
export { applyPaymentOutcome, movesForward, orderById } from "./order-payment";
export { takesOrderTotal } from "./charge-mismatch";
export { eachChargePage, RunBudget } from "./charge-pages";

/** What payments logs with: the process's pino logger, or a test's. */
export type PaymentLogger = WorkerLogger & FindingLogger;

/**
 * What the payment jobs and the webhook run on, handed in by the composition root: the process's
 * database, its engine, the validated settings and its logger.
 */
export interface PaymentDeps {
  db: Db;
  engine: Engine;
  settings: PaymentSettings;
  logger: PaymentLogger;
}

/** Where the loops say what went wrong: the process's job log (one line per state, not per round). */
export interface JobLines {
  log: (message: string) => void;
  failed: (job: string, error: unknown) => void;
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
  log?: JobLines;
  hooks?: OutboxWorkerOptions["hooks"];
  /** The payment jobs' logger: the deps' (the process's) unless a test gives its own. */
  logger?: PaymentLogger;
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
    logger: options.logger ?? deps.logger,
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
  { db, settings, logger }: PaymentDeps,
  provider: PaymentProvider,
  { log, ...options }: JobOptions,
): Loop {
  const reconciliation = createReconciliation(db, provider, {
    intervalMs: settings.reconcileIntervalMs,
    budget: settings.reconcileBudget,
    // One structured line per finding recorded, opened again or closed, never one per run.
    logger: options.logger ?? logger,
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
