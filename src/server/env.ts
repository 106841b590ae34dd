// Configuration, validated once at start-up: a typo in a variable is a clear error, not a NaN.
import { z } from "zod";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

// The app's own settings. The engine's IDEMPOTENCY_* variables are read by engine-config.ts and
// validated by the engine's own schema (@once/idempotency reads no environment), the payment jobs'
// by src/server/payments/config.ts; `checkConfiguration()` runs all three at start-up.
const schema = z.object({
  // No default: a tool started without NODE_ENV (db:setup, the users CLI) is not "development".
  NODE_ENV: z.enum(["development", "production", "test"]).optional(),
  DEMO_PROCESSING_DELAY_MS: intFrom(0),
  DEMO_PROVIDER_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  // Demo mode opens doors on purpose: one-click demo accounts, the demo API tokens, and a slow
  // request on ask (header x-demo-delay-ms). Only `DEMO_MODE=1`, or `next dev` (NODE_ENV=development),
  // turns it on; a production build, db:setup and the CLI tools have it off unless told.
  DEMO_MODE: z
    .enum(["0", "1", "true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
  // `npm run bench:http` only: serves benchControl.placeOrder, the checkout without the engine, as
  // the control its figures are divided by. A mutation with no idempotency is a door, so it needs
  // demo mode too (checked by benchControlEnabled).
  ONCE_BENCH_CONTROL: z.enum(["0", "1"]).default("0"),
  // "0": this server runs no payment loops (outbox worker, provider events, reconciliation);
  // `npm run worker` runs them in a process of its own, so their CPU does not queue behind
  // requests on the server's one thread. The engine's own jobs (reaper, sweeper, counter flush)
  // stay: the counters live in the server's memory.
  ONCE_PAYMENT_JOBS: z.enum(["0", "1"]).default("1"),
  // Behind a transaction-mode pooler (PgBouncer), DATABASE_URL is the pooler and this is
  // PostgreSQL itself, for what needs a session (LISTEN).
  DIRECT_DATABASE_URL: z.string().min(1).optional(),
  // Prepared statements: each statement is parsed and planned once per connection instead of on
  // every call (a reservation costs half). Unset: on, unless DIRECT_DATABASE_URL says DATABASE_URL
  // is a pooler; a pooler that keeps prepared statements (PgBouncer 1.21+ with
  // max_prepared_statements) may turn them back on with "1".
  DATABASE_PREPARED_STATEMENTS: z.enum(["0", "1"]).optional(),
  // The simulated provider's books (its charges, idempotency records, events) in a database of
  // their own, migrated with the app's schema, as a real provider's are outside our cluster: a
  // failover that loses the shop's last commits cannot erase a charge, so the soak sees what was
  // really charged. Unset (development, tests): the provider's tables in the shop's database.
  // Reconciliation needs both in one database and is off when this is set.
  PROVIDER_DATABASE_URL: z.string().min(1).optional(),
});

export type Env = z.infer<typeof schema>;

/** Validates a set of variables (process.env at start-up; tests pass their own). */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new Error(`invalid configuration: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

let cached: Env | undefined;
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Whether the demo doors are open (parsed once with the rest of the configuration). */
export function demoMode(): boolean {
  const e = env();
  return e.DEMO_MODE ?? e.NODE_ENV === "development";
}

/** Whether the app's database clients prepare their statements (see DATABASE_PREPARED_STATEMENTS). */
export function preparedStatementsWanted(e: Env = env()): boolean {
  if (e.DATABASE_PREPARED_STATEMENTS !== undefined) return e.DATABASE_PREPARED_STATEMENTS === "1";
  return e.DIRECT_DATABASE_URL === undefined;
}

/**
 * Whether this server serves the benchmark's control procedure. Asking for it outside demo mode
 * is a configuration error (checkConfiguration runs this at start-up), never a silent yes or no.
 */
export function benchControlEnabled(e: Env = env()): boolean {
  if (e.ONCE_BENCH_CONTROL !== "1") return false;
  if (!(e.DEMO_MODE ?? e.NODE_ENV !== "production"))
    throw new Error("invalid configuration: ONCE_BENCH_CONTROL=1 needs DEMO_MODE=1 (it serves a mutation without idempotency)");
  return true;
}
