// Configuration, validated once at start-up: a typo in a variable is a clear error, not a NaN.
import { z } from "zod";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

// The app's own settings. The engine's IDEMPOTENCY_* variables are read by engine-config.ts and
// validated by the engine's own schema (@once/idempotency reads no environment), the payment jobs'
// by src/server/payments/config.ts; `checkConfiguration()` runs all three at start-up.
const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DEMO_PROCESSING_DELAY_MS: intFrom(0),
  DEMO_PROVIDER_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  // Demo mode lets the browser ask for a slow request (header x-demo-delay-ms); off in production.
  DEMO_MODE: z
    .enum(["0", "1", "true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
});

export type Env = z.infer<typeof schema>;

let cached: Env | undefined;
export function env(): Env {
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      throw new Error(`invalid configuration: ${z.prettifyError(parsed.error)}`);
    }
    cached = parsed.data;
  }
  return cached;
}

export function demoMode(): boolean {
  const e = env();
  return e.DEMO_MODE ?? e.NODE_ENV !== "production";
}
