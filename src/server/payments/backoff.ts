// Exponential backoff with jitter for outbox retries.
import type { OutboxConfig } from "./config";

/**
 * The wait after failed attempt `attempt` (1-based): base · 2^(attempt−1), capped, with "equal
 * jitter" (half fixed, half random) so rows that failed together (a provider outage) do not all
 * come back in the same second, yet none retries sooner than half its nominal wait.
 */
export function backoffMs(
  attempt: number,
  config: Pick<OutboxConfig, "baseBackoffMs" | "maxBackoffMs">,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(
    config.maxBackoffMs,
    config.baseBackoffMs * 2 ** Math.max(0, attempt - 1),
  );
  return Math.round(nominal / 2 + (random() * nominal) / 2);
}
