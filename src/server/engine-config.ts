// The engine's settings from the environment, read once at start-up and validated by the engine's
// own schema: the engine itself reads no environment variable.
import { parseEngineConfig, type EngineConfig } from "@once/idempotency";

const VARIABLES = {
  leaseMs: "IDEMPOTENCY_LEASE_MS",
  ttlSeconds: "IDEMPOTENCY_TTL_SECONDS",
  maxLiveKeys: "IDEMPOTENCY_MAX_LIVE_KEYS",
  transactionTimeoutMs: "IDEMPOTENCY_TRANSACTION_TIMEOUT_MS",
  liveKeyCountTtlMs: "IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS",
  replayCacheSize: "IDEMPOTENCY_REPLAY_CACHE_SIZE",
  maxWaitMs: "IDEMPOTENCY_MAX_WAIT_MS",
} as const;

export function engineConfigFrom(environment: NodeJS.ProcessEnv): EngineConfig {
  const input: Record<string, number> = {};
  for (const [field, name] of Object.entries(VARIABLES)) {
    const raw = environment[name];
    if (raw === undefined || raw === "") continue;
    const value = Number(raw);
    if (!Number.isInteger(value)) throw new Error(`${name} must be a whole number, got "${raw}"`);
    input[field] = value;
  }
  try {
    return parseEngineConfig(input);
  } catch (error) {
    // Name the variable, not the engine's field.
    let message = (error as Error).message;
    for (const [field, name] of Object.entries(VARIABLES)) message = message.replaceAll(field, name);
    throw new Error(message);
  }
}

let cached: EngineConfig | undefined;
/** The process's engine configuration, parsed on first use. */
export function appEngineConfig(): EngineConfig {
  return (cached ??= engineConfigFrom(process.env));
}
