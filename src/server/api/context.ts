// The tRPC context: the process's app (its database, idempotency engine and configuration), the
// request's headers, the response headers (so the idempotency middleware can set
// Idempotency-Key-Expires, Retry-After, Idempotent-Replayed), how many calls share this HTTP
// request, and who is calling (resolved lazily, once).
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import type { AppConfig } from "../config";
import type { Db } from "../db/client";
import type { Engine } from "../engine";
import { principalFromHeaders, type Principal } from "../auth/principal";
import type { Refusals } from "../../http/refusals";

export interface Context {
  db: Db;
  engine: Engine;
  config: AppConfig;
  headers: Headers;
  resHeaders: Headers;
  /** Calls in this HTTP request: an Idempotency-Key on a batch of several is refused. */
  batchSize: number;
  /** Resolved once per request, on first use (queries on public procedures never pay for it). */
  getPrincipal: () => Promise<Principal | null>;
  /** The caller if getPrincipal has found them already (undefined: not yet); never a lookup. */
  knownPrincipal: () => Principal | null | undefined;
  /** How this request sleeps on another's settle (Prefer: wait): counted out of the admission. */
  whileWaiting?: <T>(sleep: () => Promise<T>) => Promise<T>;
  /** This instance's refusal counts (the dashboard shows them); absent in some tests' contexts. */
  refusals?: Refusals;
}

/** What the route knows of this one request beyond its headers. */
export interface RequestScope {
  whileWaiting?: Context["whileWaiting"];
  /** The caller, looked up once for a request and its duplicates (src/server/edge/waiters.ts). */
  caller?: Caller;
}

/** Who is calling, looked up on first use and then known: a context's getPrincipal/knownPrincipal. */
export type Caller = Pick<Context, "getPrincipal" | "knownPrincipal">;

/**
 * The caller named by `headers` (bearer token or session cookie), looked up on first use, once. A
 * lookup that failed (the database) is not kept: the next use looks again.
 */
export function callerOf(app: { db: Db; config: { demo: boolean } }, headers: Headers): Caller {
  let principal: Promise<Principal | null> | undefined;
  let known: Principal | null | undefined;
  const lookUp = () =>
    principalFromHeaders(app.db, headers, { demo: app.config.demo }).then(
      (found) => (known = found),
      (error: unknown) => {
        principal = undefined;
        throw error;
      },
    );
  return { getPrincipal: () => (principal ??= lookUp()), knownPrincipal: () => known };
}

/** What a context is made of: the server app, or the parts of one a test builds. */
export type ContextApp = Pick<Context, "db" | "engine" | "config" | "refusals">;

export function createContextFor(
  app: ContextApp,
  headers: Headers,
  resHeaders: Headers,
  batchSize = 1,
  caller: Caller = callerOf(app, headers),
): Context {
  const { db, engine, config, refusals } = app;
  return { db, engine, config, refusals, headers, resHeaders, batchSize, ...caller };
}

/** The fetch adapter's createContext for `app`. */
export function contextMaker(
  app: ContextApp,
  { caller, ...request }: RequestScope = {},
): (opts: FetchCreateContextFnOptions) => Context {
  return (opts) => ({
    ...createContextFor(app, opts.req.headers, opts.resHeaders, opts.info.calls.length, caller),
    ...request,
  });
}
