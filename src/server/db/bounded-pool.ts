// The app's pg pool: a request waits for a connection for the store's wait
// (connectionTimeoutMillis), in order, as pg-pool queues it. A wait that runs out is busy (the
// engine's classifier), and the refusal carries a Retry-After from the rate connections go out.
//
// It never refuses early because its queue looks long: the front door bounds the requests in
// flight (src/server/edge/admission.ts). Refusing early under a crowd fed itself (each refusal's
// wasted work slowed the transactions holding connections, so more were refused): 4 cells of 9
// served nothing; waiting, all 7 measured served (docs/design.md, "The pool").
//
// It also recovers from a database restored under it (stale-catalog.ts).
import pg from "pg";
import { classifyStoreFailure, POOL_QUEUE_FULL, StoreFailure } from "@once/idempotency/operator";
import { DrainRate } from "../drain-rate";
import { CatalogWatch } from "./stale-catalog";

type PoolQueueFull = Error & { code: typeof POOL_QUEUE_FULL; retryAfterSeconds: number };

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

  /** A busy refusal with a Retry-After: how long those waiting take at the hand-out rate. */
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
