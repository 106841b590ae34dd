// A lane's share of the instance's time, as a budget of milliseconds (a token bucket): it fills at
// `share` of a millisecond each millisecond, up to LANE_BURST_MS, and each request of the lane
// spends the time it took. While the budget is spent, a place that comes free stays taken, idle,
// until the budget is back to nothing owed; so a lane busy without a break gets its share of the
// time, and a short burst (a browser's page and its prefetches, a balancer's first probes) is
// served at once. Time, not CPU, is what is counted, so a lane waiting on the database (or on the
// API's requests, interleaved with its own) is held back more than it needs: never less.

/** The time a lane may spend at once beyond its share: a burst's worth of requests. */
export const LANE_BURST_MS = 500;

export class TimeBudget {
  private balance: number;
  private at = performance.now();

  /** `share`: of the instance's time (1: no bound); `burstMs`: the most the budget holds. */
  constructor(
    private readonly share: number,
    private readonly burstMs = LANE_BURST_MS,
  ) {
    this.balance = burstMs;
  }

  /** Spends `ms`; returns how long the place should stay idle before it is handed on. */
  spend(ms: number): number {
    if (this.share >= 1) return 0;
    const now = performance.now();
    this.balance = Math.min(this.burstMs, this.balance + (now - this.at) * this.share) - ms;
    this.at = now;
    return this.balance >= 0 ? 0 : -this.balance / this.share;
  }
}

/**
 * `serve`, with the time it took spent from `budget`, and its place handed on once the budget
 * allows (at most `maxIdleMs` later: a request slowed by something else does not close its lane
 * for long) while the lane is `crowded`, and at once otherwise: a lone browser whose pages are
 * slow (a cold start, a busy machine) is served, not held back into its lane's deadline. In any
 * case no sooner than the next turn of the event loop in any case: handed on at once, a
 * lane's requests ran one after another without a socket being read in between, and a flood of
 * health checks was answered 455 times in 7 s while the API answered nothing.
 */
export function paced(
  budget: TimeBudget,
  maxIdleMs: number,
  crowded: () => boolean,
  serve: () => Promise<Response>,
): () => Promise<Response> {
  return async () => {
    const started = performance.now();
    try {
      return await serve();
    } finally {
      const owed = budget.spend(performance.now() - started);
      const idleMs = crowded() ? Math.min(owed, maxIdleMs) : 0;
      await new Promise((resolve) =>
        idleMs >= 1 ? setTimeout(resolve, idleMs) : setImmediate(resolve),
      );
    }
  };
}
