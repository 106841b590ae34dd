// The app's pg pool: a request waits for a connection for the store's wait
// (connectionTimeoutMillis), in order, as pg-pool queues it. A wait that runs out is busy (the
// engine's one classifier, classifyStoreFailure), and the pool says when to come back: its refusal
// carries a Retry-After from the rate it hands connections out.
//
// It never refuses a request early because its queue looks long. The front door bounds the
// requests in flight before any work (src/server/edge/admission.ts), so the pool's queue is never
// longer than the places. A refusal here comes after the request has been parsed, routed and its
// caller looked up: under a crowd that sends again at once (npm run bench:overload -- --crowd,
// 1 024 connections of new-key checkouts), refusing early whenever the queue looked longer than
// the hand-out rate could drain within the wait fed itself: each refusal's wasted work slowed the
// transactions holding the connections (they wait on the event loop between statements), so
// hand-outs slowed, so more were refused, and in 4 cells of 9 the instance served nothing for the
// whole cell (0 checkouts a second, about 1 500 refusals a second). Waiting instead, it served in
// all 7 cells measured (docs/design.md, "The pool").
//
// It also recovers from a database restored under it (stale-catalog.ts): a connection whose
// prepared statements name types that are gone is discarded, with every connection made before it.
import pg from "pg";
import { classifyStoreFailure, POOL_QUEUE_FULL, StoreFailure } from "@once/idempotency/operator";
import { DrainRate } from "../drain-rate";
import { CatalogWatch } from "./stale-catalog";

export interface PoolQueueFull extends Error {
  code: typeof POOL_QUEUE_FULL;
  retryAfterSeconds: number;
}

type Done = (release?: unknown) => void;
type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: Done,
) => void;

export class BoundedPool extends pg.Pool {
  /** How fast connections are handed out. */
  private readonly handedOut: DrainRate;
  private readonly waitMs: number;
  private readonly catalog = new CatalogWatch();

  /** `now`: a monotonic clock in ms (tests move it). */
  constructor(
    config: pg.PoolConfig & { connectionTimeoutMillis: number },
    now: () => number = () => performance.now(),
  ) {
    super(config);
    this.waitMs = config.connectionTimeoutMillis;
    // A pause in hand-outs longer than the wait was an idle spell, not a slow queue.
    this.handedOut = new DrainRate(now, undefined, this.waitMs);
    this.on("acquire", () => this.handedOut.record());
    this.on("connect", (client) => this.catalog.watch(client));
  }

  // pg-pool's connect has a callback form (pool.query uses it) and a promise form (Prisma's
  // adapter). Both check out through `checkout`, which drops connections a restore left behind.
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const client = this.checkout();
    if (!callback) return client;
    client.then(
      (c) => callback(undefined, c, (release) => c.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
  }

  private async checkout(): Promise<pg.PoolClient> {
    for (;;) {
      const client = await super.connect().catch((error: Error) => {
        throw this.withRetryAfter(error);
      });
      if (this.catalog.current(client)) return this.catalog.guard(client);
      client.release(new Error("made before the database was restored: discarded"));
    }
  }

  /**
   * A busy refusal (the wait ran out) with the pool's Retry-After: the time the callers waiting
   * now take to be served at the rate connections are handed out.
   */
  private withRetryAfter(error: Error): Error {
    if (classifyStoreFailure(error) !== StoreFailure.BUSY) return error;
    return Object.assign(
      new Error(`no database connection within ${this.waitMs} ms: busy`, { cause: error }),
      {
        code: POOL_QUEUE_FULL as typeof POOL_QUEUE_FULL,
        retryAfterSeconds: this.handedOut.retryAfter(this.waitingCount + 1),
      },
    ) satisfies PoolQueueFull;
  }
}
