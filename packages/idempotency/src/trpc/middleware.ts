// The tRPC entry point: a middleware that runs `next()` inside the key's transaction (through
// engine.execute) and branches on `result.ok`; it never wraps `next()` in try/catch (a
// middleware's next() does not throw: it returns { ok: false, error }).
//
// Byte for byte, and the same types: the answer is stored as the router's transformer serializes
// it (superjson's `{ json, meta }`, or the data itself without one), as JSON text. The first answer
// and every replay are rebuilt from that text through the same transformer, and tRPC serializes
// them again on the way out: serialize(deserialize(stored)) is `stored`, so the bytes are the
// first answer's and a Date, a Map, a BigInt or undefined arrive as themselves.
import type { TRPCCombinedDataTransformer } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { middlewareMarker, type MiddlewareResult } from "@trpc/server/unstable-core-do-not-import";
import { Header } from "../constants.js";
import type { IdempotencyEngine } from "../engine.js";
import { IdempotencyError } from "../errors.js";
import { parseIdempotencyKey } from "../key.js";
import { Reason } from "../reasons.js";
import { reasonOf } from "../reason-of.js";
import type { HandlerOutcome, Outcome } from "../protocol/execute.js";
import { bodyOmitted } from "../protocol/stored-size.js";
import type { SqlTransaction } from "../store/types.js";
import { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
import type { HttpAccess } from "./http.js";
import { replayedError, toTRPCError, type StoredError } from "./errors.js";

const JSON_TYPE = "application/json";

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
}

/** What the handler finds on `ctx`: the transaction to write through, and the request's key. */
export interface IdempotentContext<TTx> {
  tx: TTx;
  idempotencyKey: string;
}

/**
 * The middleware for `t.procedure.use(…)` on mutations: `ctx.tx` and `ctx.idempotencyKey` are
 * typed in the handler. `t` gives the router's transformer, so stored answers keep their types.
 */
export function createIdempotencyMiddleware<TCtx, TTx extends SqlTransaction>(
  t: TRPCInstanceLike,
  options: IdempotencyMiddlewareOptions<TCtx, TTx>,
) {
  const { output } = t._config.transformer;
  const engineOf =
    typeof options.engine === "function"
      ? options.engine
      : () => options.engine as IdempotencyEngine<TTx>;
  type Result = MiddlewareResult<IdempotentContext<TTx>>;

  return async function idempotency(opts: {
    ctx: TCtx;
    path: string;
    type: string;
    getRawInput: () => Promise<unknown>;
    next: (opts: {
      ctx: IdempotentContext<TTx>;
      getRawInput: () => Promise<unknown>;
    }) => Promise<Result>;
  }): Promise<Result> {
    const { ctx, path, next } = opts;
    if (opts.type !== "mutation")
      throw new Error(`idempotency applies to mutations only (${path} is a ${opts.type})`);
    const http = options.http(ctx);
    if (!http)
      throw new Error(
        `idempotency needs HTTP access on the context (${path} was called without it, e.g. through a server-side caller)`,
      );
    if (http.batchSize > 1) {
      const message =
        "A batch of mutations cannot be idempotent: send each mutation on its own, with its own Idempotency-Key";
      throw toTRPCError(new IdempotencyError(Reason.BATCH_NOT_ALLOWED, message));
    }
    const parsed = parseIdempotencyKey(http.header(Header.KEY));
    if (!parsed.ok) throw toTRPCError(new IdempotencyError(parsed.reason, parsed.message));
    const waitSeconds = parsePreferWait(http.header(Header.PREFER));

    let firstResult: Result | undefined;
    let outcome: Outcome;
    try {
      const request = {
        scope: await options.scope(ctx),
        key: parsed.key,
        procedure: path,
        input: await opts.getRawInput(),
        waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
      };
      outcome = await engineOf(ctx).execute(request, async (tx): Promise<HandlerOutcome> => {
        // An input parser placed after this middleware (`.use(idempotency).input(schema)`) reads
        // the raw input through this function, and reports invalid input as a 400 from next().
        let parsedAfter = false;
        const getRawInput = () => ((parsedAfter = true), opts.getRawInput());
        const result = await next({ ctx: { tx, idempotencyKey: parsed.key }, getRawInput });
        if (result.ok) {
          firstResult = result;
          return {
            kind: "success",
            response: {
              status: 200,
              body: JSON.stringify(output.serialize(result.data) ?? null),
              contentType: JSON_TYPE,
            },
          };
        }
        const status = getHTTPStatusCodeFromError(result.error);
        // Transient: the engine releases the key (or, for a unique violation, stores a 409).
        if (status < 400 || status >= 500) throw result.error;
        // Invalid input is recorded nowhere (it may be the parser's 400): released, passed on as
        // is.
        if (parsedAfter && result.error.code === "BAD_REQUEST") throw result.error;
        const stored: StoredError = {
          code: result.error.code,
          message: result.error.message,
          reason: reasonOf(result.error),
        };
        return {
          kind: "deterministic",
          response: { status, body: JSON.stringify(stored), contentType: JSON_TYPE },
        };
      });
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error;
      if (error.retryAfterSeconds !== undefined)
        http.setHeader(Header.RETRY_AFTER, String(error.retryAfterSeconds));
      if (error.appliedWaitSeconds !== undefined)
        http.setHeader(Header.PREFERENCE_APPLIED, preferenceApplied(error.appliedWaitSeconds));
      throw toTRPCError(error);
    }

    http.setHeader(Header.EXPIRES, outcome.expiresAt.toUTCString());
    if (outcome.appliedWaitSeconds !== undefined)
      http.setHeader(Header.PREFERENCE_APPLIED, preferenceApplied(outcome.appliedWaitSeconds));
    if (outcome.replayed) http.setHeader(Header.REPLAYED, "true");
    // The first answer and every replay are built from the stored text alone.
    const { response } = outcome;
    if (response.omittedBytes !== undefined) throw toTRPCError(bodyOmitted(response.omittedBytes));
    if (outcome.kind === "deterministic")
      throw replayedError(JSON.parse(response.body) as StoredError, response.status);
    const data: unknown = output.deserialize(JSON.parse(response.body));
    if (firstResult?.ok) return { ...firstResult, data };
    // A replay: the handler does not run, so there is no next() result to pass on; this is the
    // result tRPC's own resolver would have returned (test/trpc-internals.test.ts guards it).
    const replay = { marker: middlewareMarker, ok: true as const, data, ctx };
    return replay;
  };
}
