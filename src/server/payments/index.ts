// Payments: the simulated provider, the outbox worker, webhook handling, reconciliation, and the
// loops that schedule them in the server process and in `npm run worker`.
import type { Db } from "../db/client";
import { EVENT_POLL_MS, RECONCILE_INTERVAL_MS, paymentSettings } from "./config";
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

export interface PaymentJobOptions {
  log?: (m: string) => void;
  hooks?: OutboxWorkerOptions["hooks"];
  /**
   * The simulated provider's own books (PROVIDER_DATABASE_URL), outside the shop's database as a
   * real provider's are: a failover of the shop's cluster cannot erase a charge. By default the
   * provider keeps its tables in the shop's database (development, tests).
   */
  books?: Db;
}

/** The provider as the environment configures it (DEMO_PROVIDER_FAILURE_RATE, …_TIMEOUT_RATE), writing to `books`. */
export function providerFromEnv(books: Db): SimulatedProvider {
  const settings = paymentSettings();
  return new SimulatedProvider(books, { failureRate: settings.failureRate, timeoutAfterChargeRate: settings.timeoutAfterChargeRate });
}

/** Where the provider reports events: PAYMENTS_WEBHOOK_URL, or the webhook handler in-process. */
export function eventSinkFromEnv(db: Db, books: Db = db): EventSink {
  const { webhookUrl, webhookSecret } = paymentSettings();
  // In-process delivery is a function call, not a door: only HTTP delivery is signed and checked.
  return webhookUrl ? httpSink(webhookUrl, webhookSecret) : async (body) => (await handleProviderWebhook(db, body, books)).status;
}

/** The outbox worker and the provider's event delivery, as loops. */
export function startPaymentWorker(db: Db, options: PaymentJobOptions = {}): Loop[] {
  const settings = paymentSettings();
  const books = options.books ?? db;
  const worker = createOutboxWorker(db, { provider: providerFromEnv(books), config: settings.outbox, hooks: options.hooks, log: options.log });
  const dispatcher = createEventDispatcher(books, { deliver: eventSinkFromEnv(db, books), log: options.log });
  return [
    startLoop("outbox", () => worker.runOnce(), { idleMs: settings.pollMs, busy: (r) => r.claimed > 0, log: options.log }),
    startLoop("provider-events", () => dispatcher.runOnce(), { idleMs: EVENT_POLL_MS, busy: (r) => r.delivered > 0, log: options.log }),
  ];
}

/** Everything payments runs, in the server process or in `npm run worker`: the worker loops plus reconciliation. */
export function startPaymentJobs(db: Db, options: PaymentJobOptions = {}): () => Promise<void> {
  const { log } = options;
  const loops = startPaymentWorker(db, options);
  // Reconciliation joins the provider's charges with the orders in SQL: it needs both in one
  // database. With books of their own, it is off (said once); the soak's checker compares them.
  if (options.books && options.books !== db) log?.("[reconciliation] off: the provider's books are in their own database (PROVIDER_DATABASE_URL)");
  else loops.push(startLoop("reconciliation", () => runReconciliation(db), { idleMs: RECONCILE_INTERVAL_MS, log }));
  return async () => {
    await Promise.all(loops.map((loop) => loop.stop()));
  };
}
