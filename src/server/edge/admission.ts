// How many API requests one instance works on at once. The pool queues a request for a connection
// for the store's wait (src/server/db/bounded-pool.ts), but requests queue before they reach the
// pool too: on the event loop, each taking its turn at parsing, routing and tRPC between every
// other request's awaits. Measured (npm run bench:overload, 512 clients on two instances), with
// only the pool bounded, a refusal took 13.8 s (p50) to reach its client: it waited behind 250
// requests in progress on its instance. So the instance keeps its own bound, decided before any
// work (and, by the front door, before Next.js: src/server/edge/front-door.ts).
//
// The bound follows what the instance can finish within the store's wait, between two fixed
// numbers. Up to `served` requests (a few per pool connection) are always let in. Past that, a
// newcomer is let in while the requests ahead of it finish within `waitMs` at the rate requests
// have been finishing, up to `ceiling`. A fixed 40 refused requests the instance would have served
// in time: measured (npm run bench:overload, 64 clients per instance honouring Retry-After), it
// served 0.67x the checkouts a second of no bound at all, and the refused came back seconds later.
//
// A request asleep on another's settle (`Prefer: wait`) is not being worked on: it holds no
// connection and takes no CPU, and when the key settles it is answered from one shared read. It
// steps aside while it sleeps (`aside`), so a thousand duplicates waiting on one key do not fill
// the bound and refuse everyone else, and are not themselves refused when they wake.
//
// Past the bound a request queues for a place, first come first served, for up to the store's wait
// (`waitMs`): a client that waits is a client that is not re-sending, and a burst the instance
// serves within the wait is served, not refused. Only the deadline refuses (counted apart: stage
// `queue`), or the queue's memory bound (`maxQueued`) at once: whether a place would come in time
// is never guessed. Guessed from the rate places came free, 100 checkouts sent at once to a quiet
// instance had 54 refused at once in 0.9 s (a rate measured while it idled), and of 1 000 sent at
// once 153 were refused that the instance then served within the wait (a rate measured in the
// burst's first second, while the instance was also accepting and parsing it). Queued rather than
// refused, a client that does not honour Retry-After is held for the wait instead of sending again
// at once, so a crowd costs the instance one refusal per client per wait, not one per round trip.
//
// A request whose client leaves while it queues leaves the line (the request's abort signal), and
// one whose client left as its place came hands the place on unserved: when a crowd stops, the
// instance serves the clients still there at once, not the line the crowd left behind for up to
// the store's wait (measured, npm run bench:overload -- --crowd: 3.0 s after a flood of 1 024
// connections before 64 clients were served at their earlier rate again).
//
// `Prefer: wait` is patience for a key in flight, never a place in this line: every request queues
// for the store's wait and no longer. With its own patience in the line, a client sending
// `Prefer: wait=10` on every request outlasts everyone else whenever the line is longer than the
// store's wait, and got 10-36x their share.
//
// A refusal's Retry-After is how long the requests in flight (and queued) take to finish at the
// rate requests have been finishing: a client that honours it comes back when there is room. With
// a fixed 1 s, 512 clients retrying every second cost the two instances more CPU in refusals than
// they had left to serve (measured, npm run bench:overload: 15 checkouts served a second).
import { serverBusy } from "@once/idempotency/operator";
import { trpcRefusal } from "../api/errors";
import { DrainRate } from "../drain-rate";

interface Queued {
  grant: (placed: Placed) => void;
  timer: NodeJS.Timeout;
}

/** How a wait in the line ended: a place, the deadline, or the client gone. */
type Placed = "placed" | "deadline" | "gone";

/**
 * Requests finished before a refusal's Retry-After is computed rather than 1 s: few, because the
 * moments after a start or a surge are when a fixed 1 s brings every refused client back at once.
 */
const ADMISSION_MIN_SAMPLES = 8;

/**
 * A full bound that has let nobody out for this long is stuck, not busy: requests finish in tens
 * of milliseconds, and the slowest within the store's wait (2 s).
 */
export const STUCK_AFTER_MS = 5_000;

export interface AdmissionLimits {
  /** Requests always let in (a few per pool connection: enough to keep the pool busy). */
  served: number;
  /** Never more than this many in flight; `served` unless told (a fixed bound). */
  ceiling?: number;
  /** Past `served`, a newcomer is let in if the requests ahead finish within this. */
  waitMs?: number;
  /**
   * How many requests may queue for a place; past it they are refused at once. They cost memory
   * only while queued (their body, at most 64 KiB, already read).
   */
  maxQueued?: number;
  /** A monotonic clock in ms (tests move it). */
  now?: () => number;
  /**
   * Told of every refusal (the refusal counters, src/http/refusals.ts): `at-once` (the queue
   * full, or no wait at all), `deadline` (queued, and no place came in time).
   */
  onRefuse?: (when: RefusedWhen) => void;
}

/** When a request was refused: on arrival, or after queueing for its whole wait. */
export type RefusedWhen = "at-once" | "deadline";

export class Admission {
  private inFlight = 0;
  /** Requests waiting for a place, first come first served. */
  private readonly queue: Queued[] = [];
  /** How fast places come free (a refusal's Retry-After). */
  private readonly departures: DrainRate;
  /**
   * How fast places come free while every place is taken: the instance's capacity, measured in
   * the current busy spell only (see capacity()).
   */
  private capacityRate: DrainRate;
  /** When a place last came free while every place was taken. */
  private saturatedAt = Number.NEGATIVE_INFINITY;
  private readonly served: number;
  private readonly ceiling: number;
  private readonly waitMs: number;
  private readonly maxQueued: number;
  private readonly now: () => number;
  private readonly onRefuse: (when: RefusedWhen) => void;
  /** When a request last left, or the bound last filled up: the last sign of progress. */
  private progressAt: number;
  /** When a request last left (never: -Infinity). */
  private leftAt = Number.NEGATIVE_INFINITY;

  constructor(limits: AdmissionLimits) {
    this.now = limits.now ?? (() => performance.now());
    this.onRefuse = limits.onRefuse ?? (() => {});
    this.progressAt = this.now();
    this.served = limits.served;
    this.ceiling = Math.max(limits.served, limits.ceiling ?? limits.served);
    this.waitMs = limits.waitMs ?? 0;
    this.maxQueued = limits.maxQueued ?? limits.served * 25;
    // A pause longer than the wait between requests finishing was an idle spell.
    this.departures = new DrainRate(limits.now, ADMISSION_MIN_SAMPLES, this.waitMs);
    this.capacityRate = this.newCapacityRate();
  }

  private newCapacityRate(): DrainRate {
    return new DrainRate(this.now, ADMISSION_MIN_SAMPLES, this.waitMs);
  }

  /** Every place taken (or promised to a queued request): a departure now measures capacity. */
  private saturated(): boolean {
    return this.queue.length > 0 || this.inFlight >= this.served;
  }

  /**
   * Places coming free a second while every place is taken, in this busy spell; undefined until
   * ADMISSION_MIN_SAMPLES have, or when the last was longer ago than the wait: an idle spell since
   * (the rate of a spell that is over says nothing of the burst now, and counted with the idle time
   * it says far too little), or nothing leaving at all (then the deadline refuses, and health says
   * stuck). With a store wait of 0 (tests) a rate is never stale.
   */
  private capacity(): number | undefined {
    if (this.waitMs > 0 && this.now() - this.saturatedAt > this.waitMs) return undefined;
    return this.capacityRate.perSecond();
  }

  /** How many requests are being served now (tests). */
  get size(): number {
    return this.inFlight;
  }

  /** How many requests wait for a place (tests). */
  get queued(): number {
    return this.queue.length;
  }

  /** Requests in progress or waiting now, or one that left within the last `withinMs`. */
  activeWithin(withinMs: number): boolean {
    return this.inFlight > 0 || this.queue.length > 0 || this.now() - this.leftAt < withinMs;
  }

  /**
   * Every place taken and none given back for longer than the wait (at least STUCK_AFTER_MS):
   * nothing this instance would admit now could be served in time. Health says so (503), so a
   * balancer sends the requests elsewhere instead of into refusals.
   */
  stuck(): boolean {
    return (
      this.inFlight >= this.ceiling &&
      this.now() - this.progressAt > Math.max(this.waitMs, STUCK_AFTER_MS)
    );
  }

  /**
   * Serves the request if there is room. Otherwise it queues for a place for up to the store's
   * wait (its `Prefer: wait` buys no more: patienceOf), or is refused at once when the queue is
   * full. `serve` gets `aside`, which runs a sleep with the request counted out.
   */
  async admit(
    serve: (aside: Aside) => Promise<Response>,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const { signal } = options;
    if (signal?.aborted) return clientGone();
    if (this.hasRoom()) {
      if (++this.inFlight === this.ceiling) this.progressAt = this.now();
    }
    // Come back when the requests in flight and queued have finished, at the rate they finish.
    else {
      const patience = this.patienceOf(options.waitMs);
      if (!this.mayQueue(patience)) return this.refuse("at-once");
      const placed = await this.place(patience, signal);
      if (placed === "deadline") return this.refuse("deadline");
      if (placed === "gone") return clientGone();
    }
    // Its client left as its place came: the place goes to the next, and nothing runs.
    if (signal?.aborted) {
      this.handOn();
      return clientGone();
    }
    try {
      return await serve(this.aside);
    } finally {
      this.leave();
    }
  }

  /** Counted, with when to come back: the requests in flight and queued, at the rate they finish. */
  private refuse(when: RefusedWhen): Response {
    return busy(this.refusal(when));
  }

  /** A refusal counted: its Retry-After in seconds. */
  private refusal(when: RefusedWhen): number {
    this.onRefuse(when);
    return this.departures.retryAfter(this.inFlight + this.queue.length);
  }

  /**
   * Below `served`, always; past it, if nobody queues ahead and the requests in flight finish
   * within the wait at the instance's capacity (unknown: no, the newcomer queues).
   */
  private hasRoom(): boolean {
    if (this.inFlight < this.served) return true;
    if (this.inFlight >= this.ceiling || this.queue.length > 0) return false;
    const rate = this.capacity();
    return rate !== undefined && ((this.inFlight + 1) / rate) * 1000 <= this.waitMs;
  }

  /**
   * If a request with this `Prefer: wait` (ms) would be refused at once now: the refusal's
   * Retry-After in seconds (the refusal counted), or undefined. For the front door, which answers
   * such a request before it costs anything more (the handler's own admit() decides again for what
   * passes), writing `busy(seconds)` from bytes it keeps.
   */
  refusedNow(waitMs?: number): number | undefined {
    if (this.hasRoom() || this.mayQueue(this.patienceOf(waitMs))) return undefined;
    return this.refusal("at-once");
  }

  /**
   * How long a request may queue for a place: the store's wait, the same for every request (its
   * `Prefer: wait` is patience for a key in flight, not for this line: see the top of this file).
   * Without a store wait (tests), what the request said it would wait.
   */
  private patienceOf(waitMs = 0): number {
    return this.waitMs > 0 ? this.waitMs : waitMs;
  }

  /**
   * Room in the queue. Whether a place comes in time is left to the deadline, never guessed: a
   * guess from a capacity measured in a burst's first second (when the instance is also accepting
   * and parsing the burst) refused, of 1 000 checkouts sent at once, 153 the instance then served
   * within the wait after all (e2e/bursts.spec.ts). And a request refused at once comes straight
   * back from a client that does not wait, where a queued one holds its client for the wait.
   */
  private mayQueue(patience: number): boolean {
    return patience > 0 && this.queue.length < this.maxQueued;
  }

  /**
   * A place within `waitMs`, handed over by a request that leaves: "placed"; "deadline" if none
   * came in time; "gone" if `signal` says the client left first (it leaves the line at once: a
   * crowd that stopped waiting does not keep the instance busy serving nobody after it has gone).
   */
  private place(waitMs: number, signal?: AbortSignal): Promise<Placed> {
    return new Promise((resolve) => {
      const leaveLine = () => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) this.queue.splice(at, 1);
      };
      const onAbort = () => {
        clearTimeout(entry.timer);
        leaveLine();
        resolve("gone");
      };
      const entry: Queued = {
        grant: (placed) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(placed);
        },
        timer: setTimeout(() => {
          leaveLine();
          entry.grant("deadline");
        }, waitMs),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(entry);
    });
  }

  /** A request's place goes to the first in the queue, or is given back. */
  private leave(): void {
    this.departures.record();
    if (this.saturated()) {
      const now = this.now();
      // A new busy spell: the last one's capacity is no guide (see capacity()).
      if (this.waitMs > 0 && now - this.saturatedAt > this.waitMs)
        this.capacityRate = this.newCapacityRate();
      this.capacityRate.record();
      this.saturatedAt = now;
    }
    this.progressAt = this.leftAt = this.now();
    this.handOn();
  }

  /** A place goes to the first in the line, or is given back; nothing is counted as finished. */
  private handOn(): void {
    const next = this.queue.shift();
    if (!next) {
      this.inFlight--;
      return;
    }
    clearTimeout(next.timer);
    next.grant("placed");
  }

  /** Counted out while `sleep` runs; counted in again after it, whatever the count (no refusal). */
  private readonly aside: Aside = async (sleep) => {
    this.leave();
    try {
      return await sleep();
    } finally {
      this.inFlight++;
    }
  };
}

/** Runs a request's sleep with the request counted out of the requests in flight. */
export type Aside = <T>(sleep: () => Promise<T>) => Promise<T>;

/**
 * The answer to a request whose client left while it queued: nobody reads it (the socket is
 * closed). 499, as proxies log a request its client closed, never sent to anyone.
 */
function clientGone(): Response {
  return new Response(null, { status: 499 });
}

/** The refusal `503 store_busy` in tRPC's error shape, with its Retry-After. */
export function busy(retryAfterSeconds: number): Response {
  return trpcRefusal(serverBusy(retryAfterSeconds));
}
