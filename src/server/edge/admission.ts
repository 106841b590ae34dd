// How many API requests one instance works on at once, decided before any work (and, by the front
// door, before Next.js). Bounded at the pool only, a refusal waited behind 250 requests on the
// event loop and took 13.8 s (p50) to reach its client (npm run bench:overload).
//
// Up to `served` requests are always let in; past that a newcomer is let in while the requests
// ahead finish within `waitMs` at the measured capacity, up to `ceiling` (a fixed bound served
// 0.67x the checkouts of none). A request asleep on another's settle (`Prefer: wait`) steps
// `aside`: it holds no connection nor CPU, so a thousand duplicates do not fill the bound.
//
// Past the bound a request queues first come first served for the store's wait, whatever its
// `Prefer: wait` (with its own patience, `wait=10` on every request got 10-36x its share). Only the
// deadline or a full queue (`maxQueued`) refuses: whether a place would come in time is never
// guessed (guessed from a burst's first second, 153 of 1 000 checkouts were refused that the
// instance then served in time), and a queued client that ignores Retry-After is held instead of
// re-sending. A client that leaves leaves the line, and a place that comes to a gone client is
// handed on. A refusal's Retry-After is how long the requests ahead take at the rate they finish
// (a fixed 1 s brought 512 clients back every second and left 15 checkouts served a second).
import { serverBusy } from "@once/idempotency/operator";
import { trpcRefusal } from "../api/errors";
import { DrainRate } from "../drain-rate";

interface Queued {
  grant: (placed: Placed) => void;
  timer: NodeJS.Timeout;
}

/** How a wait in the line ended: a place, the deadline, or the client gone. */
type Placed = "placed" | "deadline" | "gone";

/** Requests finished before Retry-After is measured rather than 1 s: few, as after a surge. */
const ADMISSION_MIN_SAMPLES = 8;

/** A full bound that let nobody out this long is stuck, not busy (requests take ms, at most 2 s). */
export const STUCK_AFTER_MS = 5_000;

export interface AdmissionLimits {
  /** Requests always let in (a few per pool connection). */
  served: number;
  /** Never more than this many in flight; `served` unless told. */
  ceiling?: number;
  /** The store's wait: past `served`, the most the requests ahead may take; the line's deadline. */
  waitMs?: number;
  /** How many may queue (each holding its body, 64 KiB at most); past it, refused at once. */
  maxQueued?: number;
  /** A monotonic clock in ms (tests move it). */
  now?: () => number;
  onRefuse?: (when: RefusedWhen) => void;
}

/** When a request was refused: on arrival, or after queueing for its whole wait. */
export type RefusedWhen = "at-once" | "deadline";

export class Admission {
  private inFlight = 0;
  private readonly queue: Queued[] = [];
  /** How fast places come free (a refusal's Retry-After). */
  private readonly departures: DrainRate;
  /** How fast places come free while all are taken, in this busy spell: the capacity. */
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
  private leftAt = Number.NEGATIVE_INFINITY;

  constructor(limits: AdmissionLimits) {
    this.now = limits.now ?? (() => performance.now());
    this.onRefuse = limits.onRefuse ?? (() => {});
    this.progressAt = this.now();
    this.served = limits.served;
    this.ceiling = Math.max(limits.served, limits.ceiling ?? limits.served);
    this.waitMs = limits.waitMs ?? 0;
    this.maxQueued = limits.maxQueued ?? limits.served * 25;
    this.departures = new DrainRate(limits.now, ADMISSION_MIN_SAMPLES, this.waitMs);
    this.capacityRate = this.newCapacityRate();
  }

  private newCapacityRate(): DrainRate {
    return new DrainRate(this.now, ADMISSION_MIN_SAMPLES, this.waitMs);
  }

  /** Every place taken or promised: a departure now measures capacity. */
  private saturated(): boolean {
    return this.queue.length > 0 || this.inFlight >= this.served;
  }

  /**
   * Places freed a second while all are taken, in this busy spell; undefined until measured, or
   * after an idle spell longer than the wait (an old spell's rate says nothing of this burst).
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

  /** Full, and no place given back for longer than the wait: health says 503, the balancer moves. */
  stuck(): boolean {
    return (
      this.inFlight >= this.ceiling &&
      this.now() - this.progressAt > Math.max(this.waitMs, STUCK_AFTER_MS)
    );
  }

  /** Serves the request now, or after a place in the line, or refuses it; `serve` gets `aside`. */
  async admit(
    serve: (aside: Aside) => Promise<Response>,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const { signal } = options;
    if (signal?.aborted) return clientGone();
    if (this.hasRoom()) {
      if (++this.inFlight === this.ceiling) this.progressAt = this.now();
    } else {
      const patience = this.patienceOf(options.waitMs);
      if (!this.mayQueue(patience)) return busy(this.refusal("at-once"));
      const placed = await this.place(patience, signal);
      if (placed === "deadline") return busy(this.refusal("deadline"));
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

  /** A refusal counted: its Retry-After in seconds. */
  private refusal(when: RefusedWhen): number {
    this.onRefuse(when);
    return this.departures.retryAfter(this.inFlight + this.queue.length);
  }

  /** Below `served`; past it, nobody queued and those in flight done within the wait at capacity. */
  private hasRoom(): boolean {
    if (this.inFlight < this.served) return true;
    if (this.inFlight >= this.ceiling || this.queue.length > 0) return false;
    const rate = this.capacity();
    return rate !== undefined && ((this.inFlight + 1) / rate) * 1000 <= this.waitMs;
  }

  /** The front door's check: a counted refusal's Retry-After (s) if admit() would refuse at once. */
  refusedNow(waitMs?: number): number | undefined {
    if (this.hasRoom() || this.mayQueue(this.patienceOf(waitMs))) return undefined;
    return this.refusal("at-once");
  }

  /** The store's wait for every request; without one (tests), the request's own. */
  private patienceOf(waitMs = 0): number {
    return this.waitMs > 0 ? this.waitMs : waitMs;
  }

  private mayQueue(patience: number): boolean {
    return patience > 0 && this.queue.length < this.maxQueued;
  }

  /** A place handed over within `waitMs`, or the deadline, or the client gone (it leaves the line). */
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

  /** A request finished: counted, and its place handed on. */
  private leave(): void {
    this.departures.record();
    if (this.saturated()) {
      const now = this.now();
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

/** Nobody reads it (the socket is closed): 499, as proxies log a request its client closed. */
export function clientGone(): Response {
  return new Response(null, { status: 499 });
}

/** The refusal `503 store_busy` in tRPC's error shape, with its Retry-After. */
export function busy(retryAfterSeconds: number): Response {
  return trpcRefusal(serverBusy(retryAfterSeconds));
}
