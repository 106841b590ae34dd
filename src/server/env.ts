// Configuration, validated once at start-up: a typo in a variable is a clear error, not a NaN.
import { z } from "zod";

const intFrom = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const schema = z.object({
  DATABASE_URL: z.string().optional(),
  PORT: intFrom(3000, 1),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  SESSION_SECRET: z.string().min(16).optional(),
  // How long a request may hold its key before another may take it over. Longer than any checkout
  // takes (well under a second), short enough that a crashed instance's keys free up quickly.
  IDEMPOTENCY_LEASE_MS: intFrom(30_000, 1),
  // How long a key and its stored answer are kept: 24 h covers every client retry policy we know
  // (mobile apps retry for minutes, queues redeliver for hours).
  IDEMPOTENCY_TTL_SECONDS: intFrom(86_400, 1),
  IDEMPOTENCY_MAX_LIVE_KEYS: intFrom(100_000, 1),
  DEMO_PROCESSING_DELAY_MS: intFrom(0),
  DEMO_PROVIDER_FAILURE_RATE: z.coerce.number().min(0).max(1).default(0),
  // Demo mode lets the browser ask for a slow request (header x-demo-delay-ms); off in production.
  DEMO_MODE: z
    .enum(["0", "1", "true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "1" || v === "true")),
  // Background jobs (reaper, sweeper, outbox worker, reconciliation) in the server process.
  ONCE_BACKGROUND_JOBS: z.enum(["0", "1"]).default("1"),
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
