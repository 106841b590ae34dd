// The HTTP layer's one edge, whatever the framework: which methods need a key, the key's syntax,
// the engine's protocol around a handler that answers a Fetch Response, and what the client gets
// (the first answer with the key's expiry, a replay marked so, a refusal as problem details).
// `idempotent` (route.ts) feeds it Fetch Requests; the Express, Fastify and NestJS adapters feed it
// what their frameworks parsed, and the answer their handlers wrote.
import { Header } from "../constants.js";
import type { IdempotencyEngine } from "../engine.js";
import { IdempotencyError } from "../errors.js";
import { parseIdempotencyKey } from "../key.js";
import type { HandlerOutcome, Outcome } from "../protocol/execute.js";
import type { SqlTransaction } from "../store/types.js";
import { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
import { capture, rebuild, replayedHeaderNames, type Captured } from "./answer.js";
import { headerNamesOf, type HeaderNames, type HeaderNamesOption } from "../header-names.js";
import { refusal } from "./problem.js";

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

/** What every protected route is told, whatever its framework. */
export interface ProtectOptions<TTx extends SqlTransaction> {
  /** The engine (one per process). */
  engine: IdempotencyEngine<TTx>;
  /**
   * false: the two-phase path, for a handler whose effects are not written through `tx` (it calls
   * out, or writes through a client of its own): no transaction is held while it runs, and its
   * answer is stored after it.
   */
  transaction?: boolean;
  /**
   * The methods that need a key (default POST and PATCH, as the draft says: the ones not idempotent
   * by themselves).
   */
  methods?: readonly string[];
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

const DEFAULT_METHODS = ["POST", "PATCH"];

/** A route's options with the defaults worked out once. */
export interface Protection<TTx extends SqlTransaction> {
  options: ProtectOptions<TTx>;
  methods: ReadonlySet<string>;
  replayed: ReturnType<typeof replayedHeaderNames>;
  names: HeaderNames;
}

export function protectionOf<TTx extends SqlTransaction>(
  options: ProtectOptions<TTx>,
): Protection<TTx> {
  return {
    options,
    methods: new Set((options.methods ?? DEFAULT_METHODS).map((m) => m.toUpperCase())),
    replayed: replayedHeaderNames(options.replayHeaders),
    names: headerNamesOf(options.headerNames),
  };
}

/** The request's key as parsed, or its refusal (400 problem details). */
export function keyOrRefusal(
  protection: Protection<SqlTransaction>,
  header: string | null | undefined,
): string | Response {
  const parsed = parseIdempotencyKey(header);
  if (parsed.ok) return parsed.key;
  return refusal(new IdempotencyError(parsed.reason, parsed.message), protection.options.docs);
}

/** A request the protocol takes on: its key, scope, and what its fingerprint is made of. */
export interface Exchange {
  key: string;
  scope: string;
  method: string;
  /** Its path and query (the origin plays no part). */
  url: URL;
  headers: Headers;
  /** The value fingerprinted with the operation's name. */
  input: unknown;
}

/** The first answer as the handler made it, headers and bytes (the outcome has what is stored). */
type FirstAnswer = Captured & { headers: Headers };

/** Carries a 5xx answer out of the engine, which releases the key: the retry runs anew. */
class ServerErrorAnswer {
  constructor(readonly answer: FirstAnswer) {}
}

/**
 * Runs `handler` under the engine's protocol, and answers what the client gets: the handler's
 * answer (a 2xx or 3xx commits with the key, a 4xx is stored, a 5xx releases the key), a replay,
 * or a refusal. An error the handler throws goes on to the caller (the key is released).
 */
export async function protect<TTx extends SqlTransaction>(
  protection: Protection<TTx>,
  exchange: Exchange,
  handler: (context: TransactionRouteContext<TTx>) => Response | Promise<Response>,
): Promise<Response> {
  const { engine, docs } = protection.options;
  let first: FirstAnswer | undefined;
  const run = async (tx: TTx | undefined): Promise<HandlerOutcome> => {
    const context = {
      key: exchange.key,
      scope: exchange.scope,
      ...(tx === undefined ? {} : { tx }),
    };
    const answer = await handler(context as TransactionRouteContext<TTx>);
    const maxStored = engine.config.maxStoredBodyBytes;
    first = { ...(await capture(answer, protection.replayed, maxStored)), headers: answer.headers };
    return outcomeOf(first);
  };
  const request = idempotentRequestOf(protection, exchange);
  let outcome: Outcome;
  try {
    outcome =
      protection.options.transaction === false
        ? await engine.execute(request, () => run(undefined), { transaction: false })
        : await engine.execute(request, (tx) => run(tx));
  } catch (error) {
    if (!(error instanceof ServerErrorAnswer)) void first?.rest?.cancel();
    return answerOfError(error, docs);
  }
  if (outcome.replayed) void first?.rest?.cancel();
  return answerOf(protection.names, outcome, outcome.replayed ? undefined : first);
}

/** What the engine is asked: the key, and the request's identity (its fingerprint's input). */
function idempotentRequestOf(protection: Protection<SqlTransaction>, exchange: Exchange) {
  const method = exchange.method.toUpperCase();
  const waitSeconds = parsePreferWait(exchange.headers.get(Header.PREFER));
  return {
    scope: exchange.scope,
    key: exchange.key,
    procedure: protection.options.operation ?? `${method} ${exchange.url.pathname}`,
    input: exchange.input,
    waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
  };
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
  if (response.omittedBytes !== undefined) extra.set(names.bodyOmitted, "omitted");
  return rebuild(response, response.headers ?? [], extra);
}
