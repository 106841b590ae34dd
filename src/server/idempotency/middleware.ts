// The tRPC entry point. A named middleware that awaits `next()` inside the key's transaction and
// branches on `result.ok`; it never wraps `next()` in try/catch (a middleware's next() does not
// throw: it returns { ok: false, error }).
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { Header } from "./constants";
import { BatchNotAllowedError, IdempotencyError, KeyInvalidError, KeyMissingError, toTRPCCode } from "./errors";
import { parseIdempotencyKey } from "./key";
import { executeIdempotently, type EngineDeps, type HandlerOutcome, type Outcome } from "./protocol";
import type { Tx } from "./store";

/** What the middleware needs from the app's context; the engine knows nothing else about it. */
export interface IdempotencyContext {
  headers: Headers;
  resHeaders: Headers;
  batchSize: number;
}

/** A deterministic failure as stored and replayed: enough to rebuild the same error body. */
interface StoredError {
  code: TRPCError["code"];
  message: string;
  reason?: string;
}

/** Carries `reason` through TRPCError.cause, where the app's errorFormatter reads it. */
class ReasonCause extends Error {
  constructor(readonly reason: string | undefined, message: string) {
    super(message);
  }
}

function reasonOf(error: TRPCError): string | undefined {
  const own = (error as { reason?: unknown }).reason;
  if (typeof own === "string") return own;
  const fromCause = (error.cause as { reason?: unknown } | undefined)?.reason;
  return typeof fromCause === "string" ? fromCause : undefined;
}

export function toTRPCError(error: IdempotencyError): TRPCError {
  return new TRPCError({ code: toTRPCCode(error), message: error.message, cause: error });
}

function storedErrorToTRPC(stored: StoredError): TRPCError {
  return new TRPCError({ code: stored.code, message: stored.message, cause: new ReasonCause(stored.reason, stored.message) });
}

/** JSON round trip: what is stored, what is answered the first time and on every replay. */
function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

type MiddlewareResultLike = { ok: true; data: unknown } | { ok: false; error: TRPCError };

export interface IdempotencyMiddlewareOptions<TCtx extends IdempotencyContext> {
  /** The engine for this request (its store is the request's database). */
  deps: (ctx: TCtx) => EngineDeps;
  /** The key's scope: always from authentication, never from the request body. */
  scopeOf: (ctx: TCtx) => string | Promise<string>;
}

export function createIdempotencyMiddleware<TCtx extends IdempotencyContext>(options: IdempotencyMiddlewareOptions<TCtx>) {
  return async function idempotency<TResult extends MiddlewareResultLike>(opts: {
    ctx: TCtx;
    path: string;
    type: string;
    getRawInput: () => Promise<unknown>;
    next: (opts: { ctx: { tx: Tx } }) => Promise<TResult>;
  }): Promise<TResult> {
    const { ctx, path, getRawInput, next } = opts;
    if (opts.type !== "mutation") throw new Error(`idempotency applies to mutations only (${path} is a ${opts.type})`);
    if (ctx.batchSize > 1) throw toTRPCError(new BatchNotAllowedError());
    const parsed = parseIdempotencyKey(ctx.headers.get(Header.KEY));
    if (!parsed.ok) {
      throw toTRPCError(parsed.reason === "idempotency_key_missing" ? new KeyMissingError(parsed.message) : new KeyInvalidError(parsed.message));
    }

    let outcome: Outcome;
    let firstResult: TResult | undefined;
    try {
      outcome = await executeIdempotently(
        options.deps(ctx),
        { scope: await options.scopeOf(ctx), key: parsed.key, procedure: path, input: await getRawInput() },
        async (tx): Promise<HandlerOutcome> => {
          const result = await next({ ctx: { tx } });
          if (result.ok) {
            firstResult = result;
            return { kind: "success", status: 200, body: toJson(result.data) };
          }
          const status = getHTTPStatusCodeFromError(result.error);
          if (status >= 400 && status < 500) {
            const stored: StoredError = { code: result.error.code, message: result.error.message, reason: reasonOf(result.error) };
            return { kind: "deterministic", status, body: stored };
          }
          throw result.error; // transient: the engine releases the key
        },
      );
    } catch (error) {
      if (error instanceof IdempotencyError) {
        if (error.retryAfterSeconds !== undefined) ctx.resHeaders.set(Header.RETRY_AFTER, String(error.retryAfterSeconds));
        throw toTRPCError(error);
      }
      throw error;
    }

    ctx.resHeaders.set(Header.EXPIRES, outcome.expiresAt.toUTCString());
    if (outcome.replayed) ctx.resHeaders.set(Header.REPLAYED, "true");
    if (outcome.kind === "deterministic") throw storedErrorToTRPC(outcome.body as StoredError);
    // The first answer and every replay carry the same JSON.
    if (firstResult && firstResult.ok) return { ...firstResult, data: outcome.body };
    return { ok: true, data: outcome.body, marker: "middlewareMarker" } as unknown as TResult;
  };
}
