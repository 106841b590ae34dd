// The client's half of the idempotency protocol, as a tRPC link. Put it first in `links`, before
// the `splitLink` that sends mutations through `httpLink({ headers: idempotencyHeaders })` and
// queries through any batching link:
//
//   links: [idempotencyLink(), splitLink({ condition: (op) => op.type === "mutation",
//     true: httpLink({ url, headers: idempotencyHeaders }), false: httpBatchStreamLink({ url }) })]
//
// For every mutation it picks the key (the caller's, the intent's, or a new one per call) and
// sends it again with that same key when no final answer came (retry-policy.ts), honouring
// `Retry-After`. Queries pass through untouched. What the answer was (replayed, expiry, attempts)
// goes on the result's context, on a final error (`idempotencyInfoOfError`) and to the caller's
// `onIdempotencyEvent`.
import type { TRPCLink } from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { observable } from "@trpc/server/observable";
import { Reason } from "../reasons.js";
import {
  BATCHED_MUTATION_MESSAGE,
  BatchedMutationError,
  opsWithHeaders,
  type IdempotencyContext,
  type IdempotencyEvent,
  type IdempotencyInfo,
} from "./headers.js";
import { newIdempotencyKey } from "./intent-keys.js";
import {
  classifyFailure,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_DELAY_MS,
  expiresAtOf,
  isReplayed,
  responseOf,
  retryDelayMs,
  type BackoffOptions,
  type FailureClass,
} from "./retry-policy.js";

export interface IdempotencyLinkOptions extends Partial<BackoffOptions> {
  /** Requests per mutation, the first included (default 6). */
  maxAttempts?: number;
  /** Makes a key for a call that brings none (default: a random UUID). */
  newKey?: () => string;
  /** Injected by tests: when the link waits before a retry. */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  now?: () => number;
}

/**
 * The idempotency facts of a failed mutation (e.g. a replayed `409 unique_violation`), if it went
 * through the link.
 */
export function idempotencyInfoOfError(error: unknown): IdempotencyInfo | undefined {
  return (error as { idempotency?: IdempotencyInfo } | null)?.idempotency;
}

function infoOf(
  holder: { response?: unknown } | null | undefined,
  key: string,
  attempts: number,
): IdempotencyInfo {
  const headers = responseOf(holder)?.headers;
  const expiresAt = expiresAtOf(headers);
  return { key, replayed: isReplayed(headers), attempts, ...(expiresAt ? { expiresAt } : {}) };
}

/**
 * The server asked for a key this request did not carry: say how the links are meant to be wired.
 */
function explainBypass(error: unknown, verdict: FailureClass, sentOp: object): void {
  const bypassed =
    verdict.reason === Reason.KEY_MISSING || verdict.reason === Reason.BATCH_NOT_ALLOWED;
  if (bypassed && !opsWithHeaders.has(sentOp) && error instanceof Error)
    error.message = `${error.message} (${BATCHED_MUTATION_MESSAGE})`;
}

export function idempotencyLink<TRouter extends AnyTRPCRouter>(
  options: IdempotencyLinkOptions = {},
): TRPCLink<TRouter> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff: BackoffOptions = {
    baseDelayMs: options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
  };
  const schedule =
    options.setTimeout ?? ((fn: () => void, ms: number) => globalThis.setTimeout(fn, ms));
  const cancel =
    options.clearTimeout ??
    ((handle: unknown) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>));
  const now = options.now ?? Date.now;
  const makeKey = options.newKey ?? newIdempotencyKey;

  return () =>
    ({ op, next }) => {
      if (op.type !== "mutation") return next(op);
      return observable((observer) => {
        const ctx = op.context as IdempotencyContext;
        const intent = ctx.idempotencyIntent;
        const key = ctx.idempotencyKey ?? intent?.begin(op.input).key ?? makeKey();
        const report = (event: IdempotencyEvent) => {
          try {
            ctx.onIdempotencyEvent?.(event);
          } catch {
            // a broken progress display must not break the request
          }
        };
        let attempt = 0;
        let timer: unknown;
        let subscription: { unsubscribe: () => void } | undefined;
        let done = false;

        const send = () => {
          attempt += 1;
          report({ type: "attempt", key, attempt });
          const thisAttempt = attempt;
          const sentOp = { ...op, context: { ...op.context, idempotencyKey: key } };
          subscription = next(sentOp).subscribe({
            next(envelope) {
              const info = infoOf(envelope.context, key, thisAttempt);
              intent?.settle(op.input);
              report({ type: "answer", ok: true, status: 200, ...info });
              observer.next({ ...envelope, context: { ...envelope.context, idempotency: info } });
            },
            error(error) {
              // The headers refused a batch: the wiring is wrong, and asking again cannot fix it.
              const verdict: FailureClass =
                error.cause instanceof BatchedMutationError
                  ? { retry: false, reason: "batched_mutation" }
                  : classifyFailure(error, now());
              if (verdict.retry && thisAttempt < maxAttempts && !op.signal?.aborted && !done) {
                const delayMs = retryDelayMs(thisAttempt, verdict.retryAfterMs, backoff);
                report({
                  type: "retry",
                  key,
                  attempt: thisAttempt,
                  delayMs,
                  reason: verdict.reason,
                  status: verdict.status,
                });
                timer = schedule(send, delayMs);
                return;
              }
              done = true;
              // A final answer ends the intent; a give-up (no answer, or "ask again") or an abort
              // keeps it, so the next press sends the same key and gets the first answer.
              if (!verdict.retry && verdict.reason !== "aborted") intent?.settle(op.input);
              explainBypass(error, verdict, sentOp);
              const info = infoOf(
                (error as { meta?: { response?: unknown } }).meta,
                key,
                thisAttempt,
              );
              (error as { idempotency?: IdempotencyInfo }).idempotency = info;
              report({
                type: "answer",
                ok: false,
                status: verdict.status,
                reason: verdict.reason,
                ...info,
              });
              observer.error(error);
            },
            complete() {
              done = true;
              observer.complete();
            },
          });
        };
        send();
        return () => {
          done = true;
          if (timer !== undefined) cancel(timer);
          subscription?.unsubscribe();
        };
      });
    };
}
