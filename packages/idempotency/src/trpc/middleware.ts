// The tRPC entry point: a middleware that runs `next()` inside the key's transaction (through
// engine.execute) and branches on `result.ok`; it never wraps `next()` in try/catch (a
// middleware's next() does not throw: it returns { ok: false, error }).
//
// Byte for byte, and the same types: the answer is stored as the router's transformer serializes
// it (superjson's `{ json, meta }`, or the data itself without one), as JSON text. The first answer
// and every replay are rebuilt from that text through the same transformer, and tRPC serializes
// them again on the way out: serialize(deserialize(stored)) is `stored`, so the bytes are the
// first answer's and a Date, a Map, a BigInt or undefined arrive as themselves. The engine's
// refusals and stored failures become tRPC errors here (`reasonOf` finds their reason).
import { TRPCError, type TRPCCombinedDataTransformer } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { middlewareMarker, type MiddlewareResult } from "@trpc/server/unstable-core-do-not-import";
import { Header } from "../constants.js";
import { headerNamesOf, type HeaderNames, type HeaderNamesOption } from "../header-names.js";
import type { IdempotencyEngine } from "../engine.js";
import { IdempotencyError, TRPC_CODE_BY_STATUS, trpcCodeOf } from "../errors.js";
import { parseIdempotencyKey } from "../key.js";
import { Reason } from "../reasons.js";
import { reasonOf, StoredFailure } from "../reason-of.js";
import { jsonOutcome } from "../outcome.js";
import type { HandlerOutcome, IdempotentRequest, Outcome } from "../protocol/execute.js";
import { bodyOmitted } from "../protocol/stored-size.js";
import type { SqlTransaction } from "../store/types.js";
import { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
import type { HttpAccess } from "./http.js";
import { refusalHeaders } from "../store-refusal.js";

/** What the middleware needs of your `t` (from `initTRPC…create()`): the router's transformer. */
export interface TRPCInstanceLike {
  _config: { transformer: TRPCCombinedDataTransformer };
}

/**
 * The context type is taken from `scope`'s parameter (annotate it with your procedure's context,
 * authentication included), or given as the first type parameter.
 */
export interface IdempotencyMiddlewareOptions<TCtx, TTx extends SqlTransaction> {
  /** The engine (one per process), or how to find it on the context. */
  engine: IdempotencyEngine<TTx> | ((ctx: NoInfer<TCtx>) => IdempotencyEngine<TTx>);
  /**
   * The key's scope: always from authentication (or a fixed value in an app without it), never from
   * the body.
   */
  scope: (ctx: TCtx) => string | Promise<string>;
  /**
   * The request's headers and the answer's, e.g. `(ctx) => ctx.http` with `fetchHttpAccess` in
   * createContext.
   */
  http: (ctx: NoInfer<TCtx>) => HttpAccess | undefined;
  /**
   * The names of the key, replay and expiry headers, as for an HTTP route: `"default"` (Stripe's
   * `Idempotent-Replayed`, `Idempotent-Replay-Body`, `Idempotency-Key-Expires`), `"draft"` (the
   * IETF draft's `Idempotency-Replayed`, `Idempotency-Replay`), or the names to change.
   */
  headerNames?: HeaderNamesOption;
}

/** What the handler finds on `ctx`: the transaction to write through, and the request's key. */
export interface IdempotentContext<TTx> {
  tx: TTx;
  idempotencyKey: string;
}

/** What the middleware is called with (tRPC's middleware options, as far as it reads them). */
interface MiddlewareCall<TCtx, TTx> {
  ctx: TCtx;
  path: string;
  type: string;
  getRawInput: () => Promise<unknown>;
  /** tRPC's abort signal for the call: it fires when the request's client goes away. */
  signal?: AbortSignal;
  next: (opts: {
    ctx: IdempotentContext<TTx>;
    getRawInput: () => Promise<unknown>;
  }) => Promise<MiddlewareResult<IdempotentContext<TTx>>>;
}

type Output = TRPCCombinedDataTransformer["output"];

/**
 * The middleware for `t.procedure.use(…)` on mutations: `ctx.tx` and `ctx.idempotencyKey` are
 * typed in the handler. `t` gives the router's transformer, so stored answers keep their types.
 */
export function createIdempotencyMiddleware<TCtx, TTx extends SqlTransaction>(
  t: TRPCInstanceLike,
  options: IdempotencyMiddlewareOptions<TCtx, TTx>,
) {
  const { output } = t._config.transformer;
  const names = headerNamesOf(options.headerNames);
  const engineOf =
    typeof options.engine === "function"
      ? options.engine
      : () => options.engine as IdempotencyEngine<TTx>;
  type Result = MiddlewareResult<IdempotentContext<TTx>>;

  return async function idempotency(opts: MiddlewareCall<TCtx, TTx>): Promise<Result> {
    const { ctx } = opts;
    const { http, key, waitSeconds } = readRequest(opts, options.http(ctx), names);
    let firstResult: Result | undefined;
    let outcome: Outcome;
    try {
      const request = await engineRequest(opts, await options.scope(ctx), key, waitSeconds, http);
      // A client gone before its key is reserved gets nothing run (no key, no effect: its retry
      // runs anew), so a crowd that stopped costs nothing more. Once reserved, a request runs to
      // its end, completion or release, whoever is listening.
      if (opts.signal?.aborted) throw clientClosed();
      outcome = await engineOf(ctx).execute(request, async (tx) => {
        const { result, outcome } = await runNext(opts, tx, key, output);
        if (result.ok) firstResult = result;
        return outcome;
      });
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error;
      throw refusal(error, http);
    }
    const data = answer(outcome, http, output, names);
    if (firstResult?.ok) return { ...firstResult, data };
    // A replay: the handler does not run, so there is no next() result to pass on; this is the
    // result tRPC's own resolver would have returned (test/trpc-internals.test.ts guards it).
    const replay = { marker: middlewareMarker, ok: true as const, data, ctx };
    return replay;
  };
}

/** What the engine is asked for this call: the key in its scope, the procedure and its input. */
async function engineRequest<TCtx, TTx>(
  opts: MiddlewareCall<TCtx, TTx>,
  scope: string,
  key: string,
  waitSeconds: number | undefined,
  http: HttpAccess,
): Promise<IdempotentRequest> {
  return {
    scope,
    key,
    procedure: opts.path,
    input: await opts.getRawInput(),
    waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
    whileWaiting: http.whileWaiting,
  };
}

/** 499: the client closed the request before its key was reserved; nothing ran. */
function clientClosed(): TRPCError {
  return new TRPCError({
    code: "CLIENT_CLOSED_REQUEST",
    message: "The client closed the request before it ran; nothing was executed",
  });
}

/** The call's HTTP access, key and `Prefer: wait`; a call that cannot be idempotent is refused. */
function readRequest(
  opts: { path: string; type: string },
  http: HttpAccess | undefined,
  names: HeaderNames,
): { http: HttpAccess; key: string; waitSeconds: number | undefined } {
  const { path } = opts;
  if (opts.type !== "mutation")
    throw new Error(`idempotency applies to mutations only (${path} is a ${opts.type})`);
  if (!http)
    throw new Error(
      `idempotency needs HTTP access on the context (${path} was called without it, e.g. through a server-side caller)`,
    );
  if (http.batchSize > 1) {
    const message =
      "A batch of mutations cannot be idempotent: send each mutation on its own, with its own Idempotency-Key";
    throw toTRPCError(new IdempotencyError(Reason.BATCH_NOT_ALLOWED, message));
  }
  const parsed = parseIdempotencyKey(http.header(names.key));
  if (!parsed.ok) throw toTRPCError(new IdempotencyError(parsed.reason, parsed.message));
  return { http, key: parsed.key, waitSeconds: parsePreferWait(http.header(Header.PREFER)) };
}

/**
 * Runs the procedure (next()) in the key's transaction, and says what the engine stores of it: the
 * serialized data, or a deterministic error. A transient error is thrown (the engine releases the
 * key; a unique violation it stores as a 409).
 */
async function runNext<TCtx, TTx>(
  opts: MiddlewareCall<TCtx, TTx>,
  tx: TTx,
  key: string,
  output: Output,
): Promise<{ result: MiddlewareResult<IdempotentContext<TTx>>; outcome: HandlerOutcome }> {
  // An input parser placed after this middleware (`.use(idempotency).input(schema)`) reads the raw
  // input through this function, and reports invalid input as a 400 from next().
  let parsedAfter = false;
  const getRawInput = () => ((parsedAfter = true), opts.getRawInput());
  const result = await opts.next({ ctx: { tx, idempotencyKey: key }, getRawInput });
  if (result.ok)
    return { result, outcome: jsonOutcome("success", 200, output.serialize(result.data)) };
  const status = getHTTPStatusCodeFromError(result.error);
  if (status < 400 || status >= 500) throw result.error;
  // Invalid input is recorded nowhere (it may be the parser's 400): released, passed on as is.
  if (parsedAfter && result.error.code === "BAD_REQUEST") throw result.error;
  const { code, message } = result.error;
  const stored: StoredError = { code, message, reason: reasonOf(result.error) };
  return { result, outcome: jsonOutcome("deterministic", status, stored) };
}

/** The engine's refusal as tRPC's error, with its headers set on the answer. */
function refusal(error: IdempotencyError, http: HttpAccess): Error {
  for (const [name, value] of refusalHeaders(error)) http.setHeader(name, value);
  return toTRPCError(error);
}

/**
 * The answer's headers, and its data rebuilt from the stored text alone (the first answer and
 * every replay alike); a stored failure is thrown as the error it was.
 */
function answer(outcome: Outcome, http: HttpAccess, output: Output, names: HeaderNames): unknown {
  http.setHeader(names.expires, outcome.expiresAt.toUTCString());
  if (outcome.appliedWaitSeconds !== undefined)
    http.setHeader(Header.PREFERENCE_APPLIED, preferenceApplied(outcome.appliedWaitSeconds));
  if (outcome.replayed) http.setHeader(names.replayed, "true");
  const { response } = outcome;
  if (response.omittedBytes !== undefined) {
    // tRPC has no empty success: the stored data cannot be given back, so the answer says so.
    http.setHeader(names.bodyOmitted, "omitted");
    throw toTRPCError(bodyOmitted(response.omittedBytes));
  }
  if (outcome.kind === "deterministic")
    throw replayedError(JSON.parse(response.body) as StoredError, response.status);
  return output.deserialize(JSON.parse(response.body));
}

/**
 * A deterministic failure as stored and replayed: enough to rebuild the same error body. A unique
 * violation, stored by the engine itself, has no `code` (its status says 409) and names `fields`.
 */
interface StoredError {
  code?: TRPCError["code"];
  message: string;
  reason?: string;
  fields?: string[];
}

export function toTRPCError(error: IdempotencyError): TRPCError {
  return new TRPCError({ code: trpcCodeOf(error), message: error.message, cause: error });
}

function replayedError(stored: StoredError, status: number): TRPCError {
  const code =
    stored.code ?? TRPC_CODE_BY_STATUS[status as keyof typeof TRPC_CODE_BY_STATUS] ?? "BAD_REQUEST";
  return new TRPCError({
    code,
    message: stored.message,
    cause: new StoredFailure(stored.reason, stored.message, stored.fields),
  });
}
