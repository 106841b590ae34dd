// How fast a queue drains, from when its last items left: the pool's connections handed out
// (src/server/db/bounded-pool.ts) and the API requests an instance finished
// (src/server/edge/admission.ts). A refusal's Retry-After is the time the present queue takes to
// drain at that rate, so a polite client comes back when there is room instead of every second.

/**
 * Departures the rate is measured over: recent enough to follow a change of load, enough to be
 * steady.
 */
export const RATE_WINDOW = 64;
/** No Retry-After beyond this: a client should come back and find out. */
export const MAX_RETRY_AFTER_SECONDS = 30;

export class DrainRate {
  /** When each of the last RATE_WINDOW departures happened (`now()`, a ring). */
  private readonly at = new Float64Array(RATE_WINDOW);
  private departed = 0;
  /** Longest a pause counts (see the constructor); Infinity: every pause in full. */
  private readonly maxGapMs: number;

  /**
   * `now`: a monotonic clock in ms (tests move it). `minSamples`: how many departures it takes
   * before there is a rate (up to RATE_WINDOW): fewer answer sooner after a start, more steadily.
   * `maxGapMs`: a pause between departures counts for at most this long. A queue that drains
   * does not pause for longer than its wait; a longer pause was an idle spell (nobody queued), and
   * counted in full it would make the first burst after it look slow: refused, or told to come
   * back in 30 s, by a pool or an instance that drains it in a fraction of the wait. A queue with
   * no wait (0, or none given) has no such bound: every pause counts.
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
   * Departures per second over the last RATE_WINDOW (or all so far, if fewer), counted up to now
   * (so a queue that stopped draining sees its rate fall, down to what `maxGapMs` allows), each
   * pause counted for at most `maxGapMs`; undefined before `minSamples`.
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
    return rate === undefined ? 1 : retryAfterFor(queued / rate);
  }
}

/** A drain time as a Retry-After: whole seconds, 1 to MAX_RETRY_AFTER_SECONDS. */
export function retryAfterFor(drainSeconds: number): number {
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(drainSeconds)));
}
