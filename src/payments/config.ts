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
 * compares them with the orders; its sweep laps the whole history in ten runs. A minute keeps the
 * dashboard within a minute or two of the truth (a failover's lost orders show as findings soon
 * after), and a disagreement of any age within fifteen; one run costs a page or two of the list
 * and a few queries per page: nothing next to the checkouts it checks.
 */
export const RECONCILE_INTERVAL_MS = 60_000;

/**
 * What one reconciliation run may spend on the provider's list, whatever the provider answers: a
 * provider that says `has_more: true` for ever, answers a gigabyte, or stalls mid-answer costs a
 * run this much and no more. Each page is judged and its findings written before the next is read,
 * so the memory a run holds is one page (and one chunk of orders), whatever the provider answers.
 */
export interface ReconcileBudget {
  /**
   * Pages per run (100 charges each). 1 000 pages is 100 000 charges: a minute's run judges a
   * shop taking over 800 charges a second, and a backlog larger than that is judged over several
   * runs (each continues where the last stopped).
   */
  maxPages: number;
  /**
   * Bytes of one page's body. A page of 100 charges is about 20 KB; 1 MiB is fifty times that,
   * and the most a run reads of a page that is not a page.
   */
  maxPageBytes: number;
  /**
   * Wall time per run, the provider's answers included (a body that stalls ends with it). Two
   * minutes is a thousand pages at 120 ms each, and keeps a stuck run from holding the loop for
   * longer than two of its periods.
   */
  maxRunMs: number;
}

export const DEFAULT_RECONCILE_BUDGET: ReconcileBudget = {
  maxPages: 1_000,
  maxPageBytes: 1024 * 1024,
  maxRunMs: 120_000,
};

/**
 * DEMO_MODE only: the secret the simulated provider signs its webhooks with when
 * PAYMENTS_WEBHOOK_SECRET is unset, so `npm run dev` works out of the box. Public, so never valid
 * outside demo mode: there the secret must be set, or the server refuses to start.
 */
export const DEMO_WEBHOOK_SECRET = "simpay-demo-webhook-secret-not-for-production";

/** A shared secret shorter than this is guessable; 32 characters of a random token are not. */
const MIN_WEBHOOK_SECRET_LENGTH = 32;

/**
 * DEMO_MODE only: the secret key the shop calls the simulated provider with when
 * PAYMENTS_PROVIDER_SECRET_KEY is unset, and the key every starter of the simulated provider
 * (`npm run dev`, the tests, the soak, the benches) gives the shop "once" there. Public, so never
 * valid outside demo mode: there the key must be set, and this one is refused.
 */
export const DEMO_PROVIDER_SECRET_KEY = "sk_demo_once_simpay_not_for_production_0123456789";

/** A secret key shorter than this is guessable (the provider asks the same of its shops' keys). */
const MIN_PROVIDER_SECRET_KEY_LENGTH = 32;

/**
 * The shop's secret key with the provider: printable ASCII without spaces (it travels in the
 * Authorization header), long enough not to be guessed.
 */
export const providerSecretKey = z
  .string()
  .min(
    MIN_PROVIDER_SECRET_KEY_LENGTH,
    `PAYMENTS_PROVIDER_SECRET_KEY must be at least ${MIN_PROVIDER_SECRET_KEY_LENGTH} characters`,
  )
  .regex(/^[\x21-\x7e]+$/, "PAYMENTS_PROVIDER_SECRET_KEY is printable ASCII without spaces");

const positiveInt = z.coerce.number().int().min(1);
/** The payment jobs' variables: part of the one configuration schema (src/server/config.ts). */
export const paymentEnvShape = {
  // ---- payments: the provider and reconciliation ----
  // The payment provider's API (services/provider in development, tests and the soak, which start
  // it and set this). The shop reaches the provider only there; unset, no payment loop can run.
  PAYMENTS_PROVIDER_URL: z.url().optional(),
  // The shop's secret key with the provider (`Authorization: Bearer <key>` on every call), as the
  // provider's dashboard gives it; the simulated provider is started with it (PROVIDER_SHOPS).
  PAYMENTS_PROVIDER_SECRET_KEY: providerSecretKey.optional(),
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
  // The secret the provider signs webhooks with (src/payments/webhook-signature.ts).
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
  /** The shop's secret key with the provider (PAYMENTS_PROVIDER_SECRET_KEY). */
  providerSecretKey: string;
  outbox: OutboxConfig;
  pollMs: number;
  reconcileIntervalMs: number;
  reconcileBudget: ReconcileBudget;
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
    providerSecretKey: providerSecretKeyFrom(e.PAYMENTS_PROVIDER_SECRET_KEY, demo),
    outbox: {
      ...DEFAULT_OUTBOX_CONFIG,
      leaseMs: e.OUTBOX_LEASE_MS,
      maxAttempts: e.OUTBOX_MAX_ATTEMPTS,
      maxBackoffMs: e.OUTBOX_MAX_BACKOFF_MS,
    },
    pollMs: e.OUTBOX_POLL_MS,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    reconcileBudget: DEFAULT_RECONCILE_BUDGET,
  };
}

/**
 * The shop's secret key: the one configured, or in demo mode the demo key. Outside demo mode it
 * must be set, and must not be the demo key (public, in this repository).
 */
export function providerSecretKeyFrom(configured: string | undefined, demo: boolean): string {
  if (configured === undefined) {
    if (demo) return DEMO_PROVIDER_SECRET_KEY;
    throw new Error(
      "PAYMENTS_PROVIDER_SECRET_KEY is not set: outside demo mode the shop calls the payment provider with its own secret key; " +
        "set it to the key the provider gave this shop (at least 32 characters).",
    );
  }
  if (!demo && configured === DEMO_PROVIDER_SECRET_KEY)
    throw new Error(
      "PAYMENTS_PROVIDER_SECRET_KEY is the demo key, which is public: outside demo mode set the key the provider gave this shop.",
    );
  return configured;
}
