// What the clients saw, kept in memory for the checker and the chart: every request (when, how
// long, which status) and every intent (one cart, one key, every answer it got).

/**
 * A response's status, or what happened instead: the client dropped it, or the connection failed.
 */
export type Seen = number | "dropped" | "error";

export interface RequestSample {
  /** ms since the run started, when the request was sent. */
  t: number;
  ms: number;
  seen: Seen;
  /**
   * Why a 503 refused (the body's `error.data.reason`, or where it came from when the body says
   * nothing).
   */
  reason?: string;
  /** A 503's Retry-After, in seconds, when it had one. */
  retryAfter?: number;
}

export interface CartLine {
  productId: string;
  quantity: number;
}

export interface Intent {
  id: number;
  tenant: string;
  key: string;
  items: CartLine[];
  slow: boolean;
  startedAt: number;
  /** When it got its final answer (200, or a stored refusal); undefined while open. */
  endedAt?: number;
  /** The final status, when there was one. */
  final?: number;
  /** The order id of every 200 answer (the first one and every replay or resend). */
  orderIds: string[];
  /** Every status it was answered with (for the 500 and 422 counts). */
  statuses: number[];
  attempts: number;
  /** It was sent once more after its answer (a reload), maybe after the operator busted its key. */
  resent: boolean;
}

export interface Fault {
  /** ms since the run started. */
  t: number;
  /**
   * "db": a fault of the patroni profiles (switchover, postmaster killed, node lost, stall), named
   * by its detail.
   */
  kind:
    | "kill"
    | "pg-restart"
    | "pg-stop"
    | "pg-start"
    | "bust"
    | "release"
    | "provider-recovers"
    | "db";
  detail: string;
}

export class Recorder {
  readonly requests: RequestSample[] = [];
  readonly intents: Intent[] = [];
  readonly faults: Fault[] = [];
  readonly started = performance.now();

  now(): number {
    return performance.now() - this.started;
  }

  fault(kind: Fault["kind"], detail: string): void {
    this.faults.push({ t: this.now(), kind, detail });
  }
}

/**
 * A small seeded generator (mulberry32): one per client, so a run's choices can be replayed by
 * seed.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
