// Exponential backoff with jitter for outbox retries, and the retry budget it makes: how long a
// row keeps being retried before it is dead-lettered.
import type { OutboxConfig } from "./config";

type BackoffConfig = Pick<OutboxConfig, "baseBackoffMs" | "maxBackoffMs">;

/**
 * The wait after failed attempt `attempt` (1-based): base · 2^(attempt−1), capped, with "equal
 * jitter" (half fixed, half random) so rows that failed together (a provider outage) do not all
 * come back in the same second, yet none retries sooner than half its nominal wait.
 */
export function backoffMs(
  attempt: number,
  config: BackoffConfig,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(
    config.maxBackoffMs,
    config.baseBackoffMs * 2 ** Math.max(0, attempt - 1),
  );
  return Math.round(nominal / 2 + (random() * nominal) / 2);
}

/**
 * The waits a row sits out before it is dead-lettered while the provider stays unreachable: the
 * sum of the waits between its `maxAttempts` attempts, with the jitter at its least (`minMs`) and
 * at its most (`maxMs`). The real time adds each attempt's own duration (an unreachable provider
 * refuses at once; a call that times out takes PROVIDER_TIMEOUT_MS) and up to one poll interval
 * per attempt. The docs state these figures; a test checks them against this function.
 */
export function deadLetterWindowMs(config: BackoffConfig & Pick<OutboxConfig, "maxAttempts">): {
  minMs: number;
  maxMs: number;
} {
  let minMs = 0;
  let maxMs = 0;
  for (let attempt = 1; attempt < config.maxAttempts; attempt++) {
    minMs += backoffMs(attempt, config, () => 0);
    maxMs += backoffMs(attempt, config, () => 1);
  }
  return { minMs, maxMs };
}
