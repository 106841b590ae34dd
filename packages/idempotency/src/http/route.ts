// One call makes a Fetch API handler (`Request → Response`: Next.js Route Handlers, Hono, Bun,
// Deno, workers) idempotent. It owns the HTTP edge: the Idempotency-Key header
// (draft-ietf-httpapi-idempotency-key-header), which methods need one, the request's fingerprint,
// the handler's real answer stored and replayed, refusals as problem details. The protocol itself
// is the engine's (engine.execute), the same as behind the tRPC middleware.
import { Header } from "../constants.js";
import type { IdempotencyEngine } from "../engine.js";
import { IdempotencyError } from "../errors.js";
import { parseIdempotencyKey } from "../key.js";
import type { HandlerOutcome, Outcome } from "../protocol/execute.js";
import { Reason } from "../reasons.js";
import type { SqlTransaction } from "../store/types.js";
import { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
import { capture, omittedReplay, rebuild, replayedHeaderNames, type Captured } from "./answer.js";
import { headerNamesOf, type HeaderNames, type HeaderNamesOption } from "../header-names.js";
import { problemResponse, refusal } from "./problem.js";
import { readBody, requestIdentity } from "./request-identity.js";

export type FetchHandler = (request: Request) => Promise<Response>;

/** What the handler of a protected request is given besides the request. */
export interface RouteContext {
  /** The request's idempotency key, as parsed (pass it on to what you call). */
  key: string;
  scope: string;
}

/**
 * With the transaction (the default): write through `tx`, and your writes commit with the key's
 * completion.
 */
export interface TransactionRouteContext<TTx> extends RouteContext {
  tx: TTx;
}

export interface IdempotentRouteOptions<TTx extends SqlTransaction> {
  /** The engine (one per process). */
  engine: IdempotencyEngine<TTx>;
  /**
   * Whose keys these are: the caller you authenticated (a user, an account), never a value from
   * the body. Return a Response instead (a 401) to refuse the request before anything is recorded.
   */
  scope: (request: Request) => string | Response | Promise<string | Response>;
  /**
   * The methods that need a key (default POST and PATCH, as the draft says: the ones not idempotent
   * by themselves).
   */
  methods?: readonly string[];
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
   * The operation's name in counters and the dashboard (default `METHOD /path`; name it for paths
   * with ids in them).
   */
  operation?: string;
  /**
   * Headers replayed with the answer besides Content-Type (default DEFAULT_REPLAYED_HEADERS).
   * Set-Cookie never is.
   */
  replayHeaders?: readonly string[];
  /**
   * The largest request body read, in bytes (default 1 MiB): past it, 413 `payload_too_large`,
   * nothing recorded.
   */
  maxBodyBytes?: number;
  /**
   * The names of the headers the route reads and writes: `"default"` (`Idempotency-Key`,
   * `Idempotent-Replayed`, `Idempotent-Replay-Body`, `Idempotency-Key-Expires`), `"draft"` (the
   * IETF draft's conformance profile: `Idempotency-Replayed`, `Idempotency-Replay`), or the names
   * to change, e.g. `{ replayed: "X-Replayed" }`.
   */
  headerNames?: HeaderNamesOption;
  /**
   * A page explaining each reason under its own anchor (`/docs/errors`): refusals link to
   * `${docs}#${reason}`.
   */
  docs?: string;
}

/** What a Request is made of (the DOM's BodyInit, which the package's Node types do not name). */
type RequestBody = NonNullable<ConstructorParameters<typeof Request>[1]>["body"];

const DEFAULT_METHODS = ["POST", "PATCH"];
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The first answer as the handler made it, headers and bytes (the outcome has what is stored). */
type FirstAnswer = Captured & { headers: Headers };

/** Carries a 5xx answer out of the engine, which releases the key: the retry runs anew. */
class ServerErrorAnswer {
  constructor(readonly answer: FirstAnswer) {}
}

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
  options: IdempotentRouteOptions<TTx> & { transaction?: boolean },
): FetchHandler {
  const route = routeOf(handler, options);
  return async function idempotentRoute(request: Request): Promise<Response> {
    const admitted = await admit(route, request);
    return admitted instanceof Response ? admitted : execute(route, request, admitted);
  };
}

/** A route's handler and options, with the defaults worked out once. */
interface Route<TTx extends SqlTransaction> {
  handler: RouteHandler<TransactionRouteContext<TTx>>;
  options: IdempotentRouteOptions<TTx> & { transaction?: boolean };
  methods: ReadonlySet<string>;
  /** The 405's Allow header. */
  allowed: string;
  replayed: ReturnType<typeof replayedHeaderNames>;
  maxBodyBytes: number;
  keyOf: (request: Request) => string | null | undefined;
  names: HeaderNames;
}

function routeOf<TTx extends SqlTransaction>(
  handler: Route<TTx>["handler"],
  options: Route<TTx>["options"],
): Route<TTx> {
  const methods = new Set((options.methods ?? DEFAULT_METHODS).map((m) => m.toUpperCase()));
  const names = headerNamesOf(options.headerNames);
  return {
    handler,
    options,
    methods,
    allowed: [...methods].join(", "),
    replayed: replayedHeaderNames(options.replayHeaders),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    keyOf: options.key ?? ((request: Request) => request.headers.get(names.key)),
    names,
  };
}

/** A request the protocol takes on: a protected method, a valid key, a scope, a bounded body. */
interface Admitted {
  key: string;
  scope: string;
  body: Uint8Array;
}

/** The request's key, scope and body; or the answer to one that needs no key, or is refused. */
async function admit<TTx extends SqlTransaction>(
  route: Route<TTx>,
  request: Request,
): Promise<Admitted | Response> {
  const { options } = route;
  if (!route.methods.has(request.method.toUpperCase())) {
    if (options.passThrough) return options.passThrough(request);
    return new Response(null, { status: 405, headers: { allow: route.allowed } });
  }
  const parsed = parseIdempotencyKey(route.keyOf(request));
  if (!parsed.ok) return refusal(new IdempotencyError(parsed.reason, parsed.message), options.docs);
  const scope = await options.scope(request);
  if (scope instanceof Response) return scope;
  const body = await readBody(request, route.maxBodyBytes);
  if (!body.ok)
    return problemResponse(
      Reason.PAYLOAD_TOO_LARGE,
      `The request body is larger than ${route.maxBodyBytes} bytes`,
      { docs: options.docs },
    );
  return { key: parsed.key, scope, body: body.bytes };
}

/** Runs the handler under the engine's protocol, or answers what the engine says instead. */
async function execute<TTx extends SqlTransaction>(
  route: Route<TTx>,
  request: Request,
  admitted: Admitted,
): Promise<Response> {
  const { engine, docs } = route.options;
  let first: FirstAnswer | undefined;
  const run = async (tx: TTx | undefined): Promise<HandlerOutcome> => {
    first = await callHandler(route, request, admitted, tx);
    return outcomeOf(first);
  };
  const idempotentRequest = idempotentRequestOf(route, request, admitted);
  let outcome: Outcome;
  try {
    outcome =
      route.options.transaction === false
        ? await engine.execute(idempotentRequest, () => run(undefined), { transaction: false })
        : await engine.execute(idempotentRequest, (tx) => run(tx));
  } catch (error) {
    if (!(error instanceof ServerErrorAnswer)) void first?.rest?.cancel();
    return answerOfError(error, docs);
  }
  if (outcome.replayed) void first?.rest?.cancel();
  return answerOf(route.names, outcome, outcome.replayed ? undefined : first);
}

/** What the engine is asked: the key, and the request's identity (its fingerprint's input). */
function idempotentRequestOf<TTx extends SqlTransaction>(
  route: Route<TTx>,
  request: Request,
  { key, scope, body }: Admitted,
) {
  const url = new URL(request.url);
  const waitSeconds = parsePreferWait(request.headers.get(Header.PREFER));
  return {
    scope,
    key,
    procedure: route.options.operation ?? `${request.method.toUpperCase()} ${url.pathname}`,
    input: fingerprintInput(route.options.fingerprint, request, url, body),
    waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
  };
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

/** Runs the handler once, and captures its answer as the engine stores it. */
async function callHandler<TTx extends SqlTransaction>(
  route: Route<TTx>,
  request: Request,
  { key, scope, body }: Admitted,
  tx: TTx | undefined,
): Promise<FirstAnswer> {
  const context = {
    key,
    scope,
    ...(tx === undefined ? {} : { tx }),
  } as TransactionRouteContext<TTx>;
  // The handler reads the body that was fingerprinted, from a request of its own.
  const own = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: body.byteLength > 0 ? (body as RequestBody) : null,
    signal: request.signal,
  });
  const answer = await route.handler(own, context);
  const maxStored = route.options.engine.config.maxStoredBodyBytes;
  return { ...(await capture(answer, route.replayed, maxStored)), headers: answer.headers };
}

/** A 2xx or 3xx commits with the key, a 4xx is stored as it is; a 5xx releases the key. */
function outcomeOf(first: FirstAnswer): HandlerOutcome {
  const { response } = first;
  if (response.status >= 500) throw new ServerErrorAnswer(first);
  return { kind: response.status >= 400 ? "deterministic" : "success", response };
}

/** The handler's 5xx as it made it, or the engine's refusal; the handler's own error goes on. */
function answerOfError(error: unknown, docs: string | undefined): Response {
  if (error instanceof ServerErrorAnswer) {
    const { response, headers, bytes, rest } = error.answer;
    return rebuild(response, headers, new Headers(), bytes, rest);
  }
  if (error instanceof IdempotencyError) return refusal(error, docs);
  throw error; // the handler's own error: the key is released, and the framework answers it
}

/**
 * The first answer (the handler's own headers, its bytes, and the rest of its stream when it was
 * too large to store) or a replay (the stored ones; an empty body if it was stored without one).
 */
function answerOf(names: HeaderNames, outcome: Outcome, first: FirstAnswer | undefined): Response {
  const { response } = outcome;
  const extra = new Headers({ [names.expires]: outcome.expiresAt.toUTCString() });
  if (outcome.appliedWaitSeconds !== undefined)
    extra.set(Header.PREFERENCE_APPLIED, preferenceApplied(outcome.appliedWaitSeconds));
  if (first) return rebuild(response, first.headers, extra, first.bytes, first.rest);
  extra.set(names.replayed, "true");
  if (response.omittedBytes === undefined) return rebuild(response, response.headers ?? [], extra);
  return omittedReplay(response, extra, names.bodyOmitted);
}
