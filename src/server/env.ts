// Configuration, validated once at start-up: a typo in a variable is a clear error, not a NaN.
import { z } from "zod";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

// The app's own settings. The engine validates its IDEMPOTENCY_* variables itself
// (src/server/idempotency/config.ts: it imports nothing from the app), the payment jobs theirs
// (src/server/payments/config.ts); `checkConfiguration()` runs all three at start-up.
const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DEMO_PROCESSING_DELAY_MS: intFrom(0),
  DEMO_PROVIDER_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  // Demo mode lets the browser ask for a slow request (header x-demo-delay-ms); off in production.
  DEMO_MODE: z
    .enum(["0", "1", "true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
  // `npm run bench:http` only: serves benchControl.placeOrder, the checkout without the engine, as
  // the control its figures are divided by. A mutation with no idempotency is a door, so it needs
  // demo mode too (checked by benchControlEnabled).
  ONCE_BENCH_CONTROL: z.enum(["0", "1"]).default("0"),
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

export function demoMode(): boolean {
  const e = env();
  return e.DEMO_MODE ?? e.NODE_ENV !== "production";
}

/**
 * Whether this server serves the benchmark's control procedure. Asking for it outside demo mode
 * is a configuration error (checkConfiguration runs this at start-up), never a silent yes or no.
 */
export function benchControlEnabled(e: Env = env()): boolean {
  if (e.ONCE_BENCH_CONTROL !== "1") return false;
  if (!(e.DEMO_MODE ?? e.NODE_ENV !== "production")) throw new Error("invalid configuration: ONCE_BENCH_CONTROL=1 needs DEMO_MODE=1 (it serves a mutation without idempotency)");
  return true;
}
