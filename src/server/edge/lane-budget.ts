// A lane's share of the instance's time, as a budget of milliseconds (a token bucket): it fills at
// `share` of a millisecond each millisecond, up to LANE_BURST_MS, and each request of the lane
// spends the time it took (at least its lane's least: LANE_REQUEST_MS, NEXT_REQUEST_MS). While the budget is spent, a place that comes
// free stays taken, idle, until the budget is back to nothing owed; so a lane busy without a break
// gets its share of the time, and a short burst (a browser's page and its prefetches, a balancer's
// first probes) is served at once. Time, not CPU, is what is counted, so a lane waiting on the
// database is held back more than it needs: never less. The debt stops at one burst: a page that
// waited seconds on a database that was down owes no more than a burst, so the lane is not held
// back for minutes after the database is back.

/**
 * What a request costs the instance beyond its handler's own time: its parse, its answer's write
 * and a turn of the event loop, none of which the handler's clock sees. A health check answered
 * from memory takes its handler 0.05 ms; counted as that, a flood of them took the event loop.
 */
export const LANE_REQUEST_MS = 1;

/**
 * The least a request Next.js answers costs the instance: measured with `npm run bench:http --
 * --route-cost`, a page prerendered at build 3.2 ms of server CPU, a path with no route 5.1 ms. Its
 * handler's clock sees a fraction of it (the rest runs after the answer is written, garbage
 * collection among it): counted by that clock, a flood of `/` was served 80 times a second within
 * a tenth's share, and took a quarter of the event loop from the API.
 */
export const NEXT_REQUEST_MS = 4;

/**
 * The time a lane may spend at once beyond its share: a browser's page and its prefetches, a
 * balancer's first probes (a lane is paced only while crowded, so a visitor never meets it). Small,
 * because a crowd that pulses meets a full burst at each pulse: at 500 ms a flood sent 5 s on, 5 s
 * off got 125 extra pages each time, and took a quarter of the API's rate.
 */
export const LANE_BURST_MS = 100;

export class TimeBudget {
  private balance: number;
  private at = performance.now();

  /**
   * `share`: of the instance's time (1: no bound); `burstMs`: the most the budget holds; `leastMs`:
   * the least a request is counted.
   */
  constructor(
    private readonly share: number,
    private readonly burstMs = LANE_BURST_MS,
    private readonly leastMs = LANE_REQUEST_MS,
  ) {
    this.balance = burstMs;
  }

  /** Spends `ms`; returns how long the place should stay idle before it is handed on. */
  spend(ms: number): number {
    if (this.share >= 1) return 0;
    const now = performance.now();
    const filled = Math.min(this.burstMs, this.balance + (now - this.at) * this.share);
    this.balance = Math.max(-this.burstMs, filled - Math.max(ms, this.leastMs));
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
