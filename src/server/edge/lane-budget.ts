// A lane's share of the instance's time, as a token bucket in ms: it fills at `share` a ms, up to
// LANE_BURST_MS; each request spends its time (at least its lane's least). While spent, a freed
// place stays idle until nothing is owed. Time, not CPU, is counted: a lane is held back more than
// it needs, never less. The debt stops at one burst, so a database outage leaves no long debt.

/** The least a request costs: its parse and write, which its handler's clock does not see. */
export const LANE_REQUEST_MS = 1;

/**
 * The least a request Next.js answers costs: a prerendered page 3.2 ms of CPU, no route 5.1 ms
 * (`npm run bench:http -- --route-cost`); its handler's clock sees a fraction of it.
 */
export const NEXT_REQUEST_MS = 4;

/** A lane's time at once beyond its share; small, as a pulsing crowd gets a full burst each pulse. */
export const LANE_BURST_MS = 100;

export class TimeBudget {
  private balance: number;
  private at = performance.now();

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
 * `serve`, its time spent from `budget`, its place handed on once the budget allows (at most
 * `maxIdleMs` later) while the lane is `crowded`, else at once; never before the event loop's next
 * turn (back to back, a lane's requests starved every socket).
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
