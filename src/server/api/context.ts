// The tRPC context: the database and its idempotency engine, the request's headers, the response
// headers (so the idempotency middleware can set Idempotency-Key-Expires, Retry-After,
// Idempotent-Replayed), how many calls share this HTTP request, and who is calling (resolved
// lazily, once).
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import { getDb, type Db } from "../db/client";
import { engineFor, type Engine } from "../engine";
import { principalFromHeaders, type Principal } from "../auth/principal";
import { demoMode } from "../env";

export interface Context {
  db: Db;
  engine: Engine;
  headers: Headers;
  resHeaders: Headers;
  /** Calls in this HTTP request: an Idempotency-Key on a batch of several is refused. */
  batchSize: number;
  /** Resolved once per request, on first use (queries on public procedures never pay for it). */
  getPrincipal: () => Promise<Principal | null>;
}

export function createContextFor(db: Db, headers: Headers, resHeaders: Headers, batchSize = 1, engine: Engine = engineFor(db)): Context {
  let principal: Promise<Principal | null> | undefined;
  return {
    db,
    engine,
    headers,
    resHeaders,
    batchSize,
    getPrincipal: () => (principal ??= principalFromHeaders(db, headers, { demo: demoMode() })),
  };
}

export function createContext(opts: FetchCreateContextFnOptions): Context {
  return createContextFor(getDb(), opts.req.headers, opts.resHeaders, opts.info.calls.length);
}
