// Payments: the simulated provider, the outbox worker, webhook handling, reconciliation, and the
// loops that schedule them in the server process and in `npm run worker`.
import type { Db } from "../db/client";
import type { Engine } from "../engine";
import type { JobLog } from "../job-log";
import { EVENT_POLL_MS, RECONCILE_INTERVAL_MS, type PaymentSettings } from "./config";
import { createEventDispatcher, httpSink, type EventSink } from "./event-dispatcher";
import { startLoop, type Loop } from "./loop";
import { createOutboxWorker, type OutboxWorkerOptions } from "./outbox-worker";
import { SimulatedProvider } from "./provider";
import { runReconciliation } from "./reconciliation";
import { handleProviderWebhook } from "./webhook";

export { createOutboxWorker, type OutboxWorker, type OutboxRunResult } from "./outbox-worker";
export { SimulatedProvider, ProviderTimeoutError, ProviderUnavailableError, type PaymentProvider, type Charge } from "./provider";
export { createEventDispatcher, httpSink } from "./event-dispatcher";
export { handleProviderWebhook, webhookResponse } from "./webhook";
export { runReconciliation, FindingKind, type Finding, type ReconciliationResult } from "./reconciliation";
export { startLoop, type Loop } from "./loop";

/** What the payment jobs run on: the process's database, its engine and the validated settings. */
export interface PaymentDeps {
  db: Db;
  engine: Engine;
  settings: PaymentSettings;
  /**
   * The simulated provider's own books (PROVIDER_DATABASE_URL), outside the shop's database as a
   * real provider's are: a failover of the shop's cluster cannot erase a charge. By default the
   * provider keeps its tables in the shop's database (development, tests): `books` is `db`.
   */
  books: Db;
}

/** The provider as the configuration sets it (DEMO_PROVIDER_FAILURE_RATE, …_TIMEOUT_RATE), writing to its books. */
export function configuredProvider({ books, settings }: PaymentDeps): SimulatedProvider {
  return new SimulatedProvider(books, { failureRate: settings.failureRate, timeoutAfterChargeRate: settings.timeoutAfterChargeRate });
}

/** Where the provider reports events: PAYMENTS_WEBHOOK_URL, or the webhook handler in-process. */
export function configuredEventSink(deps: PaymentDeps): EventSink {
  const { webhookUrl, webhookSecret } = deps.settings;
  // In-process delivery is a function call, not a door: only HTTP delivery is signed and checked.
  return webhookUrl ? httpSink(webhookUrl, webhookSecret) : async (body) => (await handleProviderWebhook(deps, body)).status;
}

type JobOptions = { log?: JobLog; hooks?: OutboxWorkerOptions["hooks"] };

/** The outbox worker and the provider's event delivery, as loops. */
export function startPaymentWorker(deps: PaymentDeps, options: JobOptions = {}): Loop[] {
  const { db, books, settings } = deps;
  const { log } = options;
  const worker = createOutboxWorker(db, { provider: configuredProvider(deps), config: settings.outbox, hooks: options.hooks, log: log?.log });
  const dispatcher = createEventDispatcher(books, { deliver: configuredEventSink(deps), log: log?.log });
  return [
    startLoop("outbox", () => worker.runOnce(), { idleMs: settings.pollMs, busy: (r) => r.claimed > 0, onError: log?.failed }),
    startLoop("provider-events", () => dispatcher.runOnce(), { idleMs: EVENT_POLL_MS, busy: (r) => r.delivered > 0, onError: log?.failed }),
  ];
}

/** Everything payments runs, in the server process or in `npm run worker`: the worker loops plus reconciliation. */
export function startPaymentJobs(deps: PaymentDeps, options: JobOptions = {}): () => Promise<void> {
  const { log } = options;
  const loops = startPaymentWorker(deps, options);
  // Reconciliation joins the provider's charges with the orders in SQL: it needs both in one
  // database. With books of their own, it is off (said once); the soak's checker compares them.
  if (deps.books !== deps.db) log?.log("[reconciliation] off: the provider's books are in their own database (PROVIDER_DATABASE_URL)");
  else loops.push(startLoop("reconciliation", () => runReconciliation(deps.db), { idleMs: RECONCILE_INTERVAL_MS, onError: log?.failed }));
  return async () => {
    await Promise.all(loops.map((loop) => loop.stop()));
  };
}
