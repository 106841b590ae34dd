// One call makes a Fetch API handler (`Request → Response`: Next.js Route Handlers, Hono, Bun,
// Deno, workers) idempotent. What is Fetch-shaped lives here (the key and scope read from the
// Request, its body read, bounded and fingerprinted, the handler given a Request of its own); the
// edge itself (the protocol around the handler, replays, refusals) is protect.ts's.
import { Reason } from "../reasons.js";
import type { SqlTransaction } from "../store/types.js";
import { problemResponse } from "./problem.js";
import {
  keyOrRefusal,
  protect,
  protectionOf,
  type Exchange,
  type ProtectOptions,
  type Protection,
  type RouteContext,
  type TransactionRouteContext,
} from "./protect.js";
import { readBody, requestIdentity } from "./request-identity.js";

export type { RouteContext, TransactionRouteContext } from "./protect.js";

export type FetchHandler = (request: Request) => Promise<Response>;

export interface IdempotentRouteOptions<TTx extends SqlTransaction> extends ProtectOptions<TTx> {
  /**
   * Whose keys these are: the caller you authenticated (a user, an account), never a value from
   * the body. Return a Response instead (a 401) to refuse the request before anything is recorded.
   */
  scope: (request: Request) => string | Response | Promise<string | Response>;
  /**
   * Requests with any other method (GET, HEAD, OPTIONS…) go here untouched; without it they are
   * answered 405.
   */
  passThrough?: (request: Request) => Response | Promise<Response>;
  /**
   * Where the key comes from: the `Idempotency-Key` header by default (a webhook may use its event
   * id).
   */
  key?: (request: Request) => string | null | undefined;
  /**
   * What makes two requests under one key "the same request" (the same key with another one is 422
   * `idempotency_key_reused`):
   * - `"request"` (the default): method, path, query, content type and body (a JSON body as
   *   canonical JSON);
   * - `"key"`: the key alone (with the operation's name). For a key that already names the request, such as a webhook's event
   *   id whose body a signature proves: a redelivery with another delivery counter or timestamp
   *   in its body gets the stored answer instead of 422;
   * - a function of the request and its body's bytes: whatever value it returns is fingerprinted
   *   (canonical JSON), with the operation's name.
   */
  fingerprint?: "request" | "key" | ((request: Request, body: Uint8Array) => unknown);
  /**
   * The largest request body read, in bytes (default 1 MiB): past it, 413 `payload_too_large`,
   * nothing recorded.
   */
  maxBodyBytes?: number;
}

/** What a Request is made of (the DOM's BodyInit, which the package's Node types do not name). */
type RequestBody = NonNullable<ConstructorParameters<typeof Request>[1]>["body"];

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * A Fetch handler that is also given the request's key and scope (and `tx`, on the transaction
 * path).
 */
type RouteHandler<TContext extends RouteContext> = (
  request: Request,
  context: TContext,
) => Response | Promise<Response>;

/**
 * Makes `handler` idempotent. A request with a protected method needs a key; the first request
 * with a key runs the handler, every retry gets its answer back (`Idempotent-Replayed: true`).
 * A 2xx or 3xx answer commits with the key; a 4xx is stored and replayed (the handler's writes
 * roll back); a 5xx or a thrown error releases the key, so a retry runs anew.
 */
export function idempotent<TTx extends SqlTransaction>(
  handler: RouteHandler<TransactionRouteContext<TTx>>,
  options: IdempotentRouteOptions<TTx> & { transaction?: true },
): FetchHandler;
/**
 * The two-phase path, for a handler whose effects are not in this database (it only calls out):
 * no transaction is held while it runs, and its answer is stored after it. Pass `context.key` on
 * to what you call, so a retry after a lost lease or store deduplicates there.
 */
export function idempotent<TTx extends SqlTransaction>(
  handler: RouteHandler<RouteContext>,
  options: IdempotentRouteOptions<TTx> & { transaction: false },
): FetchHandler;
export function idempotent<TTx extends SqlTransaction>(
  handler: RouteHandler<TransactionRouteContext<TTx>>,
  options: IdempotentRouteOptions<TTx>,
): FetchHandler {
  const route = { ...protectionOf(options), options };
  return async function idempotentRoute(request: Request): Promise<Response> {
    const admitted = await admit(route, request);
    if (admitted instanceof Response) return admitted;
    // The handler reads the body that was fingerprinted, from a request of its own.
    const own = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: admitted.body.byteLength > 0 ? (admitted.body as RequestBody) : null,
      signal: request.signal,
    });
    return protect(route, admitted.exchange, (context) => handler(own, context));
  };
}

/** A Fetch route's protection, with its own options. */
type Route<TTx extends SqlTransaction> = Protection<TTx> & { options: IdempotentRouteOptions<TTx> };

/** The request's exchange and body; or the answer to one that needs no key, or is refused. */
async function admit<TTx extends SqlTransaction>(
  route: Route<TTx>,
  request: Request,
): Promise<{ exchange: Exchange; body: Uint8Array } | Response> {
  const { options, names } = route;
  if (!route.methods.has(request.method.toUpperCase())) {
    if (options.passThrough) return options.passThrough(request);
    return new Response(null, { status: 405, headers: { allow: [...route.methods].join(", ") } });
  }
  const key = keyOrRefusal(route, (options.key ?? ((r) => r.headers.get(names.key)))(request));
  if (key instanceof Response) return key;
  const scope = await options.scope(request);
  if (scope instanceof Response) return scope;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const body = await readBody(request, maxBodyBytes);
  if (!body.ok)
    return problemResponse(
      Reason.PAYLOAD_TOO_LARGE,
      `The request body is larger than ${maxBodyBytes} bytes`,
      { docs: options.docs },
    );
  const url = new URL(request.url);
  const input = fingerprintInput(options.fingerprint, request, url, body.bytes);
  const exchange = { key, scope, method: request.method, url, headers: request.headers, input };
  return { exchange, body: body.bytes };
}

/** The value fingerprinted for a request, as the route chose (see `fingerprint`). */
function fingerprintInput(
  choice: IdempotentRouteOptions<SqlTransaction>["fingerprint"],
  request: Request,
  url: URL,
  body: Uint8Array,
): unknown {
  if (choice === undefined || choice === "request") return requestIdentity(request, url, body);
  if (choice === "key") return null;
  return choice(request, body);
}
