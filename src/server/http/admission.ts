// How many API requests one instance works on at once. The pool refuses at once what it could not
// serve within its wait (src/server/db/bounded-pool.ts), but requests queue before they reach the
// pool too: on the event loop, each taking its turn at parsing, routing and tRPC between every
// other request's awaits. Measured (npm run bench:overload, 512 clients on two instances), with
// only the pool bounded, a refusal took 13.8 s (p50) to reach its client: it waited behind 250
// requests in progress on its instance. So the instance keeps its own bound, decided before any
// work (and, by the front door, before Next.js: src/server/http/front-door.ts).
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
// serves within the wait is served, not refused. Only a request that would not get a place within
// its patience (the queue ahead of it at the rate places come free), or finds the queue full, is
// refused at once: `503 store_busy` in tRPC's error shape with Retry-After. `Prefer: wait` buys
// patience (it may wait as long as it said), never priority: it queues in the same line.
//
// A refusal's Retry-After is how long the requests in flight (and queued) take to finish at the
// rate requests have been finishing: a client that honours it comes back when there is room. With
// a fixed 1 s, 512 clients retrying every second cost the two instances more CPU in refusals than
// they had left to serve (measured, npm run bench:overload: 15 checkouts served a second).
import { Header } from "@once/idempotency/reasons";
import { describedByLink, Reason, reasonDocsPath } from "@/shared/reasons";
import { DrainRate } from "../drain-rate";

interface Queued {
  grant: (admitted: boolean) => void;
  timer: NodeJS.Timeout;
}

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
  /** Told of every refusal (the refusal counters, src/server/http/refusals.ts). */
  onRefuse?: () => void;
}

export class Admission {
  private inFlight = 0;
  /** Requests waiting for a place, first come first served. */
  private readonly queue: Queued[] = [];
  /** How fast places come free. */
  private readonly departures: DrainRate;
  private readonly served: number;
  private readonly ceiling: number;
  private readonly waitMs: number;
  private readonly maxQueued: number;
  private readonly now: () => number;
  private readonly onRefuse: () => void;
  /** When a request last left, or the bound last filled up: the last sign of progress. */
  private progressAt: number;

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
  }

  /** How many requests are being served now (tests). */
  get size(): number {
    return this.inFlight;
  }

  /** How many requests wait for a place (tests). */
  get queued(): number {
    return this.queue.length;
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
   * wait, or `waitMs` (from `Prefer: wait`) if longer, unless no place is expected in that time:
   * then it is refused at once. `serve` gets `aside`, which runs a sleep with the request counted
   * out.
   */
  async admit(
    serve: (aside: Aside) => Promise<Response>,
    options: { waitMs?: number } = {},
  ): Promise<Response> {
    if (this.hasRoom()) {
      if (++this.inFlight === this.ceiling) this.progressAt = this.now();
    }
    // Come back when the requests in flight and queued have finished, at the rate they finish.
    else if (!(await this.place(this.patienceOf(options.waitMs)))) {
      this.onRefuse();
      return busy(this.departures.retryAfter(this.inFlight + this.queue.length));
    }
    try {
      return await serve(this.aside);
    } finally {
      this.leave();
    }
  }

  /**
   * Below `served`, always; past it, if nobody queues ahead and the requests in flight finish
   * within the wait at the rate they have been finishing (unknown rate: no).
   */
  private hasRoom(): boolean {
    if (this.inFlight < this.served) return true;
    if (this.inFlight >= this.ceiling || this.queue.length > 0) return false;
    const rate = this.departures.perSecond();
    return rate !== undefined && ((this.inFlight + 1) / rate) * 1000 <= this.waitMs;
  }

  /**
   * Would a request with this `Prefer: wait` (ms) be refused at once if it came now? For a door in
   * front of the handler (src/server/http/front-door.ts) that answers such a request before it
   * costs anything more; the handler's own admit() decides again.
   */
  refusesNow(waitMs?: number): boolean {
    return !this.hasRoom() && !this.mayQueue(this.patienceOf(waitMs));
  }

  /** The refusal (counted) if a request with this `Prefer: wait` would be refused now. */
  refusalNow(waitMs?: number): Response | undefined {
    const retryAfterSeconds = this.refusedNow(waitMs);
    return retryAfterSeconds === undefined ? undefined : busy(retryAfterSeconds);
  }

  /**
   * refusalNow without making its answer: the refusal's Retry-After in seconds (the refusal
   * counted), or undefined. For the front door, which writes `busy(seconds)` from bytes it keeps:
   * making a Response and reading it back cost a refusal more than the socket's own work.
   */
  refusedNow(waitMs?: number): number | undefined {
    if (!this.refusesNow(waitMs)) return undefined;
    this.onRefuse();
    return this.departures.retryAfter(this.inFlight + this.queue.length);
  }

  /**
   * How long a request may queue for a place: the store's wait for every request (a client queued
   * is a client not re-sending), longer if it said it would wait (`Prefer: wait`). Patience, not
   * priority: every request queues in the same line, first come first served.
   */
  private patienceOf(waitMs = 0): number {
    return Math.max(waitMs, this.waitMs);
  }

  /**
   * Room in the queue, and a place expected within `patience` at the rate places come free
   * (unknown rate: yes; the deadline still holds). What could not be served in time is refused at
   * once, so the client learns it now rather than after waiting in vain.
   */
  private mayQueue(patience: number): boolean {
    if (!(patience > 0) || this.queue.length >= this.maxQueued) return false;
    const rate = this.departures.perSecond();
    return rate === undefined || ((this.queue.length + 1) / rate) * 1000 <= patience;
  }

  /** A place within `waitMs`, handed over by a request that leaves; false if none came. */
  private place(waitMs: number): Promise<boolean> {
    if (!this.mayQueue(waitMs)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry: Queued = {
        grant: resolve,
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(entry), 1);
          resolve(false);
        }, waitMs),
      };
      this.queue.push(entry);
    });
  }

  /** A request's place goes to the first in the queue, or is given back. */
  private leave(): void {
    this.departures.record();
    this.progressAt = this.now();
    const next = this.queue.shift();
    if (!next) {
      this.inFlight--;
      return;
    }
    clearTimeout(next.timer);
    next.grant(true);
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

/** The refusal `503 store_busy` in tRPC's error shape, with its Retry-After. */
export function busy(retryAfterSeconds: number): Response {
  const data = {
    code: "SERVICE_UNAVAILABLE",
    httpStatus: 503,
    reason: Reason.STORE_BUSY,
    docs: reasonDocsPath(Reason.STORE_BUSY),
  };
  const message =
    "The server is busy (too many requests in progress); nothing was executed. Retry in a moment.";
  return Response.json(
    { error: { message, code: -32603, data } },
    {
      status: 503,
      headers: {
        [Header.RETRY_AFTER]: String(retryAfterSeconds),
        Link: describedByLink(Reason.STORE_BUSY),
      },
    },
  );
}
