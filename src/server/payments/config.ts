// The payment jobs' tunables. Each value has its reason; the env variables let the demo and the
// crash test turn them, everything else uses the defaults.
import { z } from "zod";

/** The simulated provider's name: webhook keys live in the engine under this scope. */
export const PROVIDER_NAME = "simpay";
export const WEBHOOK_SCOPE = `provider:${PROVIDER_NAME}`;
export const WEBHOOK_OPERATION = "webhooks.payments";

export interface OutboxConfig {
  /**
   * Rows one worker claims per round. The claim and the recording of the batch's deliveries are
   * one statement each whatever the size, so a larger batch costs fewer round trips per row; 20
   * still lets several workers share a burst, and a crash strands at most 20 rows until their
   * lease ends (the provider key makes their retry harmless).
   */
  batchSize: number;
  /**
   * Provider calls one worker makes at once. The provider's latency, not ours, bounds a worker:
   * 5 calls in flight deliver a batch of 20 in four call times instead of twenty, while one
   * worker never opens more than 5 connections' worth of load on the provider (and on its pool).
   */
  concurrency: number;
  /**
   * How long a claimed row is ours. Far longer than one provider call (a real client would time
   * out after ~10 s), so a slow call is not taken over mid-flight; short enough that a crashed
   * worker's rows are retried within a minute. A takeover is harmless anyway: the provider key
   * makes the second call return the first charge, and completion is fenced by the attempt number.
   */
  leaseMs: number;
  /**
   * The retry budget: attempts before a row is dead-lettered (OUTBOX_MAX_ATTEMPTS). A provider
   * outage shorter than four minutes must never fail a customer's payment, so the default is the
   * fewest attempts whose waits, with the jitter at its least, add up to four minutes or more: with
   * the backoff below (2 s doubling, jitter: each wait between half and all of its nominal value),
   * 9 attempts wait 255 s to 510 s in all before the dead letter (8 attempts waited only 127 s to
   * 254 s). Each attempt's own time comes on top: an unreachable provider refuses at once, a call
   * that times out takes 10 s, and a due row waits up to one poll. A real outage still reaches an
   * operator (admin retry) instead of retrying for ever. deadLetterWindowMs (backoff.ts) computes
   * the window for any setting; a test checks these figures and the docs' against it.
   */
  maxAttempts: number;
  /** First retry after ~2 s, doubling: fast for a blip, gentle on a provider that is down. */
  baseBackoffMs: number;
  /** No single wait longer than 5 minutes, however many attempts. */
  maxBackoffMs: number;
}

export const DEFAULT_OUTBOX_CONFIG: OutboxConfig = {
  batchSize: 20,
  concurrency: 5,
  leaseMs: 60_000,
  maxAttempts: 9,
  baseBackoffMs: 2_000,
  maxBackoffMs: 300_000,
};

/**
 * How often the idle worker looks for work. It polls each second: a checkout's payment starts
 * within a second of the order, and an idle poll is one indexed query.
 */
export const OUTBOX_POLL_MS = 1_000;

/**
 * Reconciliation reads the provider's charges made since its last run (through the list API) and
 * compares them with the orders. A minute keeps the dashboard within a minute or two of the truth
 * (a failover's lost orders show as findings soon after), and one run costs a page or two of the
 * list and one query per page: nothing next to the checkouts it checks.
 */
export const RECONCILE_INTERVAL_MS = 60_000;

/**
 * DEMO_MODE only: the secret the simulated provider signs its webhooks with when
 * PAYMENTS_WEBHOOK_SECRET is unset, so `npm run dev` works out of the box. Public, so never valid
 * outside demo mode: there the secret must be set, or the server refuses to start.
 */
export const DEMO_WEBHOOK_SECRET = "simpay-demo-webhook-secret-not-for-production";

/** A shared secret shorter than this is guessable; 32 characters of a random token are not. */
const MIN_WEBHOOK_SECRET_LENGTH = 32;

const positiveInt = z.coerce.number().int().min(1);
/** The payment jobs' variables: part of the one configuration schema (src/server/config.ts). */
export const paymentEnvShape = {
  // ---- payments: the provider and reconciliation ----
  // The payment provider's API (services/provider in development, tests and the soak, which start
  // it and set this). The shop reaches the provider only there; unset, no payment loop can run.
  PAYMENTS_PROVIDER_URL: z.url().optional(),
  RECONCILE_INTERVAL_MS: positiveInt.default(RECONCILE_INTERVAL_MS),
  // ---- payments: the outbox worker ----
  OUTBOX_LEASE_MS: positiveInt.default(DEFAULT_OUTBOX_CONFIG.leaseMs),
  // The retry budget (OutboxConfig.maxAttempts): 9 attempts wait 255 s to 510 s before a dead
  // letter; deadLetterWindowMs (backoff.ts) gives the window of any other value.
  OUTBOX_MAX_ATTEMPTS: positiveInt.default(DEFAULT_OUTBOX_CONFIG.maxAttempts),
  // The longest single wait between two attempts. The soak lowers it so that its drain window
  // covers every wait a row can be in once the provider is back.
  OUTBOX_MAX_BACKOFF_MS: positiveInt.default(DEFAULT_OUTBOX_CONFIG.maxBackoffMs),
  OUTBOX_POLL_MS: positiveInt.default(OUTBOX_POLL_MS),
  // The secret the provider signs webhooks with (src/server/payments/webhook-signature.ts).
  PAYMENTS_WEBHOOK_SECRET: z
    .string()
    .min(
      MIN_WEBHOOK_SECRET_LENGTH,
      `PAYMENTS_WEBHOOK_SECRET must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters`,
    )
    .optional(),
};
type PaymentEnv = z.output<z.ZodObject<typeof paymentEnvShape>>;

export interface PaymentSettings {
  webhookSecret: string;
  /** The provider's API (PAYMENTS_PROVIDER_URL). */
  providerUrl: string | undefined;
  outbox: OutboxConfig;
  pollMs: number;
  reconcileIntervalMs: number;
}

/** The settings from the parsed variables; `demo` says whether DEMO_MODE is on. */
export function paymentSettingsFrom(e: PaymentEnv, demo: boolean): PaymentSettings {
  const webhookSecret = e.PAYMENTS_WEBHOOK_SECRET ?? (demo ? DEMO_WEBHOOK_SECRET : undefined);
  if (webhookSecret === undefined) {
    throw new Error(
      "PAYMENTS_WEBHOOK_SECRET is not set: outside demo mode the payment webhook needs the secret the provider signs its events with; " +
        "set it to a random value of at least 32 characters.",
    );
  }
  return {
    webhookSecret,
    providerUrl: e.PAYMENTS_PROVIDER_URL,
    outbox: {
      ...DEFAULT_OUTBOX_CONFIG,
      leaseMs: e.OUTBOX_LEASE_MS,
      maxAttempts: e.OUTBOX_MAX_ATTEMPTS,
      maxBackoffMs: e.OUTBOX_MAX_BACKOFF_MS,
    },
    pollMs: e.OUTBOX_POLL_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
  };
}
