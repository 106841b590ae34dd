// A pg pool that refuses at once what it cannot serve within the wait. pg-pool queues every
// request for a connection and fails it only when connectionTimeoutMillis runs out: under
// overload every request in the queue waits the whole 2 s and then gets 503 anyway, holding a
// client's socket and the server's memory all that time, and the requests behind it wait for
// nothing. This pool watches how fast it hands out connections (its drain rate) and, when a
// newcomer would join a queue longer than it can drain within the wait, refuses it before it
// queues: the engine's classifier reads the error as busy (503 store_busy), and its
// `retryAfterSeconds` is the time the present queue takes to drain. Everything the pool can
// serve within the wait is still served, in order.
import pg from "pg";
import { POOL_QUEUE_FULL } from "@once/idempotency/operator";
import { DrainRate, retryAfterFor } from "../drain-rate";

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

  /**
   * Connections handed out per second over the last RATE_WINDOW, counted up to now; undefined
   * until it has handed out that many.
   */
  drainRate(): number | undefined {
    return this.handedOut.perSecond();
  }

  /**
   * The refusal for a newcomer now, or null if it may queue (a connection is free, or the queue
   * drains within the wait).
   */
  refusal(): PoolQueueFull | null {
    if (this.idleCount > 0 || this.totalCount < (this.options.max ?? 10) || this.waitingCount === 0)
      return null;
    const rate = this.drainRate();
    if (rate === undefined) return null;
    const drainSeconds = (this.waitingCount + 1) / rate;
    if (drainSeconds * 1000 <= this.waitMs) return null;
    const error = new Error(
      `the database pool is full and ${this.waitingCount} requests are queued for a connection (about ${drainSeconds.toFixed(1)} s at ${rate.toFixed(0)} per second, more than the ${this.waitMs} ms wait): refused at once`,
    );
    return Object.assign(error, {
      code: POOL_QUEUE_FULL as typeof POOL_QUEUE_FULL,
      retryAfterSeconds: retryAfterFor(drainSeconds),
    });
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
    const refused = this.refusal();
    if (refused) {
      if (!callback) return Promise.reject(refused);
      process.nextTick(() => callback(refused, undefined, () => {}));
      return;
    }
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
