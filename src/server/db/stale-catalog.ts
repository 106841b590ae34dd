// A database restored under the running app (pg_restore --clean) makes its types anew. A prepared
// statement keeps the old type ids, so every pooled connection that prepared one answers XX000
// ("cache lookup failed for type") or 0A000 for as long as it lives: every checkout was a 503.
//
// The first connection that meets it is discarded when it comes back, with every connection made
// before it. The error is read off the protocol stream (a business transaction gives its
// connection back without one); the request that met it answers 503 and is not sent again.
import type pg from "pg";
import { isStaleCatalog } from "@once/idempotency/operator";

const BORN = Symbol("once.catalogEpoch");
const STALE = Symbol("once.staleCatalog");
type Watched = pg.Client & { [BORN]?: number; [STALE]?: boolean };

export class CatalogWatch {
  /** Connections born before this count are from before the last restore the pool met. */
  private epoch = 0;

  /** A new connection: stamped with the present epoch, and listened to for stale statements. */
  watch(client: pg.Client): void {
    const watched = client as Watched;
    watched[BORN] = this.epoch;
    client.connection.on("errorMessage", (error: unknown) => {
      if (isStaleCatalog(error)) watched[STALE] = true;
    });
  }

  /** Whether a connection is from after the last restore met (else: discard it, take another). */
  current(client: pg.Client): boolean {
    return ((client as Watched)[BORN] ?? this.epoch) >= this.epoch;
  }

  /** The checked-out connection, whose release discards it once it met a stale statement. */
  guard(client: pg.PoolClient): pg.PoolClient {
    const watched = client as pg.PoolClient & Watched;
    const release = client.release;
    client.release = (error?: Error | boolean) => {
      if (!watched[STALE]) return release(error);
      // Every connection born up to this one predates the restore; later ones do not.
      this.epoch = Math.max(this.epoch, (watched[BORN] ?? this.epoch) + 1);
      return release(
        error || new Error("its prepared statements name types the database no longer has"),
      );
    };
    return client;
  }
}
