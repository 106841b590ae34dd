// The app's pg pool: a request waits for a connection for the store's wait
// (connectionTimeoutMillis), in order, as pg-pool queues it, and a wait that runs out while
// PostgreSQL is answering on the pool's other connections is read as busy (503 store_busy, with a
// Retry-After), not as the database gone.
//
// It never refuses a request early because its queue looks long. The front door bounds the
// requests in flight before any work (src/server/http/admission.ts), so the pool's queue is never
// longer than the places. A refusal here comes after the request has been parsed, routed and its
// caller looked up: under a crowd that sends again at once (npm run bench:overload -- --crowd,
// 1 024 connections of new-key checkouts), refusing early whenever the queue looked longer than
// the hand-out rate could drain within the wait fed itself: each refusal's wasted work slowed the
// transactions holding the connections (they wait on the event loop between statements), so
// hand-outs slowed, so more were refused, and in 4 cells of 9 the instance served nothing for the
// whole cell (0 checkouts a second, about 1 500 refusals a second). Waiting instead, it served in
// all 7 cells measured (docs/design.md, "The pool").
import pg from "pg";
import { POOL_QUEUE_FULL } from "@once/idempotency/operator";
import { DrainRate } from "../drain-rate";

export interface PoolQueueFull extends Error {
  code: typeof POOL_QUEUE_FULL;
  retryAfterSeconds: number;
}

export class BoundedPool extends pg.Pool {
  /** How fast connections are handed out. */
  private readonly handedOut: DrainRate;
  private readonly waitMs: number;
  private readonly now: () => number;

  /** `now`: a monotonic clock in ms (tests move it). */
  constructor(
    config: pg.PoolConfig & { connectionTimeoutMillis: number },
    now: () => number = () => performance.now(),
  ) {
    super(config);
    this.waitMs = config.connectionTimeoutMillis;
    this.now = now;
    // A pause in hand-outs longer than the wait was an idle spell, not a slow queue.
    this.handedOut = new DrainRate(now, undefined, this.waitMs);
    this.on("acquire", () => this.handedOut.record());
    this.on("release", (error: Error | undefined) => {
      if (!error) this.lastServed = this.now();
    });
  }

  /** When a connection last came back without an error (performance.now()), if ever. */
  private lastServed = -Infinity;

  /**
   * Whether PostgreSQL answered on one of this pool's connections within the last `ms`: a health
   * check whose own statement failed (no connection came up in time under load) then knows the
   * database is reachable, and busy.
   */
  servedWithin(ms: number): boolean {
    return this.now() - this.lastServed <= ms;
  }

  // pg-pool's connect has a callback form (pool.query uses it) and a promise form (Prisma's
  // adapter).
  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(
    callback?: (
      err: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): Promise<pg.PoolClient> | void {
    const asked = this.now();
    if (!callback)
      return super.connect().catch((error: Error) => {
        throw this.readBusy(error, asked);
      });
    super.connect((error, client, done) =>
      callback(error && this.readBusy(error, asked), client, done),
    );
  }

  /**
   * A connection that did not come up within the wait while PostgreSQL answered this pool on other
   * connections meanwhile is load, not an outage: on a starved machine a backend's start and its
   * login take seconds (measured, npm run bench:overload: 9 such answers a run at 512 clients,
   * each a `503 store_unavailable` while PostgreSQL served every other request). Read as busy,
   * with a Retry-After. Recognised by what pg gives us, not by pg-pool's wording: the request
   * failed when the whole wait (connectionTimeoutMillis) had run out, and the error is no answer
   * from PostgreSQL (not a `pg.DatabaseError`: a refused login or a server shutting down says so
   * at once). Timers never fire early; a millisecond of slack covers the two clocks' rounding.
   * Without the evidence of recent service the error stays what it says.
   */
  private readBusy(error: Error, asked: number): Error {
    const waitedOut = this.now() - asked >= this.waitMs - 1;
    if (!waitedOut || error instanceof pg.DatabaseError || !this.servedWithin(this.waitMs))
      return error;
    return Object.assign(
      new Error(
        `a new database connection did not come up within ${this.waitMs} ms while the database answered on others: busy`,
        { cause: error },
      ),
      {
        code: POOL_QUEUE_FULL as typeof POOL_QUEUE_FULL,
        retryAfterSeconds: this.handedOut.retryAfter(this.waitingCount + 1),
      },
    );
  }
}
