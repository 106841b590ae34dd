// How fast a queue drains, from when its last items left: the pool's connections handed out
// (src/server/db/bounded-pool.ts) and the API requests an instance finished
// (src/server/edge/admission.ts). A refusal's Retry-After is the time the present queue takes to
// drain at that rate, so a polite client comes back when there is room instead of every second.

/** Departures the rate is measured over: recent enough to follow the load, enough to be steady. */
export const RATE_WINDOW = 64;
/** No Retry-After beyond this: a client should come back and find out. */
const MAX_RETRY_AFTER_SECONDS = 30;

export class DrainRate {
  /** When each of the last RATE_WINDOW departures happened (`now()`, a ring). */
  private readonly at = new Float64Array(RATE_WINDOW);
  private departed = 0;
  private readonly maxGapMs: number;

  /**
   * `now`: a monotonic clock in ms. `minSamples`: departures before there is a rate (fewer answer
   * sooner after a start, more steadily). `maxGapMs`: the longest a pause counts. A draining queue
   * does not pause longer than its wait; a longer pause was an idle spell, which counted in full
   * would make the next burst look slow (told to come back in 30 s). 0: every pause counts.
   */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly minSamples = RATE_WINDOW,
    maxGapMs = 0,
  ) {
    this.maxGapMs = maxGapMs > 0 ? maxGapMs : Number.POSITIVE_INFINITY;
  }

  /** One item left the queue. */
  record(): void {
    this.at[this.departed++ % RATE_WINDOW] = this.now();
  }

  /**
   * Departures per second over the last RATE_WINDOW, counted up to now (a queue that stopped
   * draining sees its rate fall), each pause at most `maxGapMs`; undefined before `minSamples`.
   */
  perSecond(): number | undefined {
    if (this.departed < this.minSamples) return undefined;
    const samples = Math.min(this.departed, RATE_WINDOW);
    let spanMs = 0;
    let previous = this.at[(this.departed - samples) % RATE_WINDOW]!;
    for (let i = this.departed - samples + 1; i <= this.departed; i++) {
      const next = i < this.departed ? this.at[i % RATE_WINDOW]! : this.now();
      spanMs += Math.min(next - previous, this.maxGapMs);
      previous = next;
    }
    return (samples * 1000) / Math.max(spanMs, 1);
  }

  /** How long `queued` items take to drain at this rate, as a Retry-After; 1 s without a rate. */
  retryAfter(queued: number): number {
    const rate = this.perSecond();
    if (rate === undefined) return 1;
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(queued / rate)));
  }
}
