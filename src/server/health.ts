// The health answer: up, busy or down, and nothing else. A health endpoint is public (load
// balancers call it without credentials), so it must not tell a stranger the database's host, port
// or driver: the reason a check failed goes to the log (one line), not to the caller.
//
// Busy is not down. Under load every pool connection is in use and requests queue for one; a
// check that queued with them would wait its turn and, past the pool's wait, report the database
// "down" while it serves hundreds of statements a second, and a load balancer would take a working
// instance out exactly when it is needed. So a saturated pool answers `busy` at once, without
// queueing, with 200 (keep sending: the instance refuses what it cannot serve itself, 503
// store_busy); only a database that cannot be reached answers 503 `down`.
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import type { BoundedPool } from "./db/bounded-pool";
import { poolOf, type Db } from "./db/client";
import { logger } from "./logger";

export type HealthBody =
  | { status: "up"; database: "up" }
  | { status: "busy"; database: "busy" }
  | { status: "down"; database: "down" }
  | { status: "unable"; reason: "requests_stuck" };

/** What the instance knows about its own requests (src/server/http/admission.ts). */
export interface RequestsInFlight {
  stuck(): boolean;
}

const NO_STORE = { "Cache-Control": "no-store" };
/**
 * A statement answered on another connection this recently: the database is up, whatever this check
 * met.
 */
const RECENTLY_SERVED_MS = 2_000;

/**
 * Every connection in use and requests already waiting: the database is serving, this instance is
 * at capacity.
 */
function saturated(db: Db): boolean {
  const pool = poolOf(db);
  return (
    pool !== undefined &&
    pool.idleCount === 0 &&
    pool.totalCount >= (pool.options.max ?? 10) &&
    pool.waitingCount > 0
  );
}

/**
 * A new connection that did not come up within the pool's connect timeout (pg destroys its socket
 * with "timeout expired"): on a starved machine PostgreSQL may be slow to accept while it serves.
 * A refused or cut connection is not this: the database cannot be reached.
 */
function connectTimedOut(error: unknown): boolean {
  return /timeout expired/i.test(error instanceof Error ? error.message : String(error));
}

/** Asked by its method, not instanceof: a bundler may copy the pool's module once per route. */
function answeredRecently(db: Db): boolean {
  const pool = poolOf(db) as Partial<BoundedPool> | undefined;
  return typeof pool?.servedWithin === "function" && pool.servedWithin(RECENTLY_SERVED_MS);
}

export async function checkHealth(db: Db, requests?: RequestsInFlight): Promise<Response> {
  // Whatever the database says: an instance whose every place is held by requests that do not
  // finish cannot serve, and a balancer must hear so (503), not `up`.
  if (requests?.stuck())
    return Response.json({ status: "unable", reason: "requests_stuck" } satisfies HealthBody, {
      status: 503,
      headers: { "Retry-After": "1", ...NO_STORE },
    });
  if (saturated(db))
    return Response.json({ status: "busy", database: "busy" } satisfies HealthBody, {
      headers: NO_STORE,
    });
  try {
    const pool = poolOf(db);
    await (pool ? pool.query("SELECT 1") : db.$queryRaw`SELECT 1`);
    return Response.json({ status: "up", database: "up" } satisfies HealthBody, {
      headers: NO_STORE,
    });
  } catch (error) {
    // Busy: no connection free in time, or a new one did not come up in time while others were
    // answering. A refused connection is down at once, however recently others were served.
    if (
      classifyStoreFailure(error) === StoreFailure.BUSY ||
      (connectTimedOut(error) && answeredRecently(db))
    ) {
      return Response.json({ status: "busy", database: "busy" } satisfies HealthBody, {
        headers: NO_STORE,
      });
    }
    // One line: the reason, not a stack trace (a load balancer checks every few seconds).
    logger.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      "health check: the database does not answer",
    );
    return Response.json({ status: "down", database: "down" } satisfies HealthBody, {
      status: 503,
      headers: { "Retry-After": "1", ...NO_STORE },
    });
  }
}
