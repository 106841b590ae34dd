// Whether the payment provider can be reached, as the worker's sends tell it: a state, logged when
// it changes. During an outage every row fails on every attempt, and one line per attempt per
// order (209 lines for 60 orders in a minute) buried the one fact an operator needs: the provider
// is down, since when, and then that it is back, after how long, with how many payments waiting.
// The per-attempt lines are debug-level; these two lines are the outage.

/** What the tracker writes with: the worker's logger (pino) or a test's. */
export interface ReachabilityLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * A send failed as "not now" (unreachable, a 5xx/408/409/429, no answer) this many times in a row
 * with no answer in between, over at least DOWN_AFTER_MS: the provider is down. Both, because a
 * healthy provider fails a share of calls at random (the soak makes 15 % fail): three failures in
 * a row within one round are a burst, three failures spread over 5 s with nothing answered are an
 * outage. A provider stopped for real is said to be down within one or two rounds of its first
 * failed send (the retries come back after 1–2 s, then 2–4 s).
 */
export const DOWN_AFTER_FAILURES = 3;
export const DOWN_AFTER_MS = 5_000;

export interface ProviderReachability {
  /** A send got an answer (a charge, or a refusal: the provider is there to refuse). */
  answered(): void;
  /** A send failed as "not now" for the outbox row `rowId`. */
  failed(rowId: string, error: unknown): void;
  /** Whether the provider is said to be down now. */
  readonly down: boolean;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createProviderReachability(
  logger: ReachabilityLogger,
  now: () => number = Date.now,
): ProviderReachability {
  /** The current run of failed sends with no answer in between, if there is one. */
  let streak: { since: number; failures: number; rows: Set<string> } | undefined;
  let down = false;
  return {
    get down() {
      return down;
    },
    answered() {
      if (down && streak) {
        const downForSeconds = Math.round((now() - streak.since) / 1000);
        logger.info(
          { provider: "reachable", downForSeconds, waitedSends: streak.rows.size },
          `[payments] the payment provider is reachable again after ${downForSeconds} s; ${streak.rows.size} payment(s) waited and are being sent`,
        );
      }
      streak = undefined;
      down = false;
    },
    failed(rowId, error) {
      streak ??= { since: now(), failures: 0, rows: new Set() };
      streak.failures++;
      streak.rows.add(rowId);
      if (down) return;
      if (streak.failures < DOWN_AFTER_FAILURES || now() - streak.since < DOWN_AFTER_MS) return;
      down = true;
      const forSeconds = Math.round((now() - streak.since) / 1000);
      logger.warn(
        { provider: "unreachable", failedForSeconds: forSeconds, waitingSends: streak.rows.size },
        `[payments] the payment provider cannot be reached (${describe(error)}): every send has failed for ${forSeconds} s; payments wait and are retried with backoff (one line when it is back; each attempt is logged at debug level)`,
      );
    },
  };
}
