// The tRPC entry point: a named middleware that runs `next()` inside the key's transaction and
// branches on `result.ok`; it never wraps `next()` in try/catch (a middleware's next() does not
// throw: it returns { ok: false, error }).
//
// Byte for byte: the answer is stored as the exact JSON text of `result.data`, and both the first
// answer and every replay are sent from that text (JSON.stringify(JSON.parse(text)) === text for
// any text JSON.stringify made), so a client that hashes bodies sees one answer.
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { middlewareMarker, type MiddlewareResult } from "@trpc/server/unstable-core-do-not-import";
import { Header } from "../constants.js";
import type { IdempotencyEngine } from "../engine.js";
import { IdempotencyError } from "../errors.js";
import { parseIdempotencyKey } from "../key.js";
import { Reason } from "../reasons.js";
import { executeIdempotently, type HandlerOutcome, type Outcome } from "../protocol/execute.js";
import type { SqlTransaction } from "../store/types.js";
import { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
import { reasonOf, replayedError, toTRPCError, type StoredError } from "./errors.js";

const JSON_TYPE = "application/json";

/** How the middleware reads and writes HTTP on your context. */
export interface HttpAccess {
  header(name: string): string | null | undefined;
  setHeader(name: string, value: string): void;
  /** Calls in this HTTP request: a key on a batch of several is refused. */
  batchSize: number;
}

export interface IdempotencyMiddlewareOptions<TCtx, TTx extends SqlTransaction> {
  /** The engine for this request (its store is the request's database). */
  engine: (ctx: TCtx) => IdempotencyEngine<TTx>;
  /** The key's scope: always from authentication, never from the request body. */
  scope: (ctx: TCtx) => string | Promise<string>;
  http: (ctx: TCtx) => HttpAccess;
}

/** What the handler finds on `ctx`: the transaction to write through, and the request's key. */
export interface IdempotentContext<TTx> {
  tx: TTx;
  idempotencyKey: string;
}

type AnyResult = MiddlewareResult<object>;

export function createIdempotencyMiddleware<TCtx, TTx extends SqlTransaction>(options: IdempotencyMiddlewareOptions<TCtx, TTx>) {
  return async function idempotency<TResult extends AnyResult>(opts: {
    ctx: TCtx;
    path: string;
    type: string;
    getRawInput: () => Promise<unknown>;
    next: (opts: { ctx: IdempotentContext<TTx> }) => Promise<TResult>;
  }): Promise<TResult> {
    const { ctx, path, next } = opts;
    if (opts.type !== "mutation") throw new Error(`idempotency applies to mutations only (${path} is a ${opts.type})`);
    const http = options.http(ctx);
    if (http.batchSize > 1) {
      throw toTRPCError(
        new IdempotencyError(
          Reason.BATCH_NOT_ALLOWED,
          "A batch of mutations cannot be idempotent: send each mutation on its own, with its own Idempotency-Key",
        ),
      );
    }
    const parsed = parseIdempotencyKey(http.header(Header.KEY));
    if (!parsed.ok) throw toTRPCError(new IdempotencyError(parsed.reason, parsed.message));
    const waitSeconds = parsePreferWait(http.header(Header.PREFER));

    let firstResult: TResult | undefined;
    let outcome: Outcome;
    try {
      outcome = await executeIdempotently(
        options.engine(ctx).deps,
        {
          scope: await options.scope(ctx),
          key: parsed.key,
          procedure: path,
          input: await opts.getRawInput(),
          waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
        },
        async (tx): Promise<HandlerOutcome> => {
          const result = await next({ ctx: { tx, idempotencyKey: parsed.key } });
          if (result.ok) {
            firstResult = result;
            return { kind: "success", response: { status: 200, body: JSON.stringify(result.data ?? null), contentType: JSON_TYPE } };
          }
          const status = getHTTPStatusCodeFromError(result.error);
          if (status < 400 || status >= 500) throw result.error; // transient: the engine releases the key
          const stored: StoredError = { code: result.error.code, message: result.error.message, reason: reasonOf(result.error) };
          return { kind: "deterministic", response: { status, body: JSON.stringify(stored), contentType: JSON_TYPE } };
        },
      );
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error;
      if (error.retryAfterSeconds !== undefined) http.setHeader(Header.RETRY_AFTER, String(error.retryAfterSeconds));
      if (error.appliedWaitSeconds !== undefined) http.setHeader(Header.PREFERENCE_APPLIED, preferenceApplied(error.appliedWaitSeconds));
      throw toTRPCError(error);
    }

    http.setHeader(Header.EXPIRES, outcome.expiresAt.toUTCString());
    if (outcome.appliedWaitSeconds !== undefined) http.setHeader(Header.PREFERENCE_APPLIED, preferenceApplied(outcome.appliedWaitSeconds));
    if (outcome.replayed) http.setHeader(Header.REPLAYED, "true");
    // The first answer and every replay are built from the stored text alone.
    if (outcome.kind === "deterministic") throw replayedError(JSON.parse(outcome.response.body) as StoredError);
    const data: unknown = JSON.parse(outcome.response.body);
    if (firstResult?.ok) return { ...firstResult, data };
    // A replay: the handler does not run, so there is no next() result to pass on; this is the
    // result tRPC's own resolver would have returned.
    const replay: AnyResult = { marker: middlewareMarker, ok: true, data };
    return replay as TResult;
  };
}
