// The browser's half of the idempotency protocol (see DESIGN.md, "The app").
//
// Every mutation carries an `Idempotency-Key`. The caller may choose the key (the checkout passes
// the key of its *intent*, one per cart snapshot, kept in sessionStorage so a double-click, a retry
// after a lost response and a reload all send the same key); otherwise the link makes one per call.
// The link retries, with that same key, whatever may not have reached a final answer:
//   - a network error (the request or its response was lost: the server may have executed it),
//   - `409 request_in_progress` (the first request still holds the key: wait and ask again),
//   - `503 store_unavailable` (the key store is down and nothing ran: wait and ask again),
// honouring `Retry-After`, with exponential backoff and a bounded number of attempts. A final
// answer (2xx, or any other 4xx such as out of stock) is never retried. Every mutation also says
// `Prefer: wait=…`, so a duplicate of a request still in flight is held by the server until the
// first answer exists and gets it at once, rather than a 409 and a retry seconds later. Whether the answer was a
// replay (`Idempotent-Replayed: true`) is put on the result's context and reported to the caller.
import type { Operation, TRPCLink } from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { observable } from "@trpc/server/observable";
import {
  classifyFailure,
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_DELAY_MS,
  isReplayedResponse,
  PREFER_WAIT_SECONDS,
  responseOf,
  retryDelayMs,
  type BackoffOptions,
  type ErrorLike,
  type RetryReason,
} from "./retry-policy";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const DEMO_DELAY_HEADER = "x-demo-delay-ms";
export const PREFER_HEADER = "Prefer";

// ---------------------------------------------------------------------------------------------
// What the link reads from and writes to an operation's context.

export type IdempotencyEvent =
  | { type: "attempt"; key: string; attempt: number }
  | { type: "retry"; key: string; attempt: number; delayMs: number; reason: RetryReason; status?: number }
  | { type: "answer"; key: string; attempts: number; replayed: boolean; ok: boolean; status?: number; reason?: string };

export interface IdempotencyInfo {
  key: string;
  replayed: boolean;
  attempts: number;
}

/** Context a caller may pass with a mutation: `client.x.mutate(input, { context: {...} })`. */
export interface IdempotencyOpContext {
  /** The key to send; the link makes one when absent. */
  idempotencyKey?: string;
  /** Told about every attempt, retry and the final answer (for a progress display). */
  onIdempotencyEvent?: (event: IdempotencyEvent) => void;
  /** Demo mode only: asks the server to pause this long inside the request. */
  demoDelayMs?: number;
}

/** What the link leaves on a successful result's context (`result.context.idempotency`). */
export interface IdempotencyResultContext {
  idempotency: IdempotencyInfo;
}

// ---------------------------------------------------------------------------------------------
// Keys and headers.

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** The headers httpLink should send for `op` (use as its `headers` option). */
export function idempotencyHeaders({ op }: { op: Pick<Operation, "type" | "context"> }): Record<string, string> {
  if (op.type !== "mutation") return {};
  const ctx = op.context as IdempotencyOpContext;
  const headers: Record<string, string> = {};
  if (ctx.idempotencyKey) headers[IDEMPOTENCY_KEY_HEADER] = ctx.idempotencyKey;
  headers[PREFER_HEADER] = `wait=${PREFER_WAIT_SECONDS}`;
  if (ctx.demoDelayMs && ctx.demoDelayMs > 0) headers[DEMO_DELAY_HEADER] = String(Math.round(ctx.demoDelayMs));
  return headers;
}

/** Reads the idempotency facts off a failed mutation's error (e.g. a replayed out-of-stock answer). */
export function idempotencyInfoOfError(error: unknown): IdempotencyInfo | undefined {
  return (error as { idempotency?: IdempotencyInfo } | null)?.idempotency;
}

// ---------------------------------------------------------------------------------------------
// The link.

/** Puts the idempotency facts on a final error and says what to report about it. */
function markFinal(error: unknown, key: string, attempts: number, verdict: ReturnType<typeof classifyFailure>): IdempotencyEvent {
  const replayed = isReplayedResponse(responseOf((error as ErrorLike).meta));
  if (error && typeof error === "object") (error as { idempotency?: IdempotencyInfo }).idempotency = { key, replayed, attempts };
  const reason = "reason" in verdict ? verdict.reason : undefined;
  return { type: "answer", key, attempts, replayed, ok: false, status: verdict.status, reason };
}

export interface IdempotencyLinkOptions extends Partial<BackoffOptions> {
  maxAttempts?: number;
  newKey?: () => string;
  /** Injected for tests. */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  now?: () => number;
}

export function idempotencyLink<TRouter extends AnyTRPCRouter>(options: IdempotencyLinkOptions = {}): TRPCLink<TRouter> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff: BackoffOptions = {
    baseDelayMs: options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
  };
  const schedule = options.setTimeout ?? ((fn: () => void, ms: number) => globalThis.setTimeout(fn, ms));
  const cancel = options.clearTimeout ?? ((handle: unknown) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>));
  const now = options.now ?? Date.now;
  const makeKey = options.newKey ?? newIdempotencyKey;

  return () =>
    ({ op, next }) => {
      if (op.type !== "mutation") return next(op);
      return observable((observer) => {
        const ctx = op.context as IdempotencyOpContext;
        const key = ctx.idempotencyKey ?? makeKey();
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
          subscription = next({ ...op, context: { ...op.context, idempotencyKey: key } }).subscribe({
            next(envelope) {
              const replayed = isReplayedResponse(envelope.context?.response);
              const info: IdempotencyInfo = { key, replayed, attempts: thisAttempt };
              report({ type: "answer", key, attempts: thisAttempt, replayed, ok: true, status: 200 });
              observer.next({ ...envelope, context: { ...envelope.context, idempotency: info } });
            },
            error(error) {
              const verdict = classifyFailure(error, now());
              if (verdict.retry && thisAttempt < maxAttempts && !op.signal?.aborted && !done) {
                const delayMs = retryDelayMs(thisAttempt, verdict.retryAfterMs, backoff);
                report({ type: "retry", key, attempt: thisAttempt, delayMs, reason: verdict.reason, status: verdict.status });
                timer = schedule(send, delayMs);
                return;
              }
              done = true;
              report(markFinal(error, key, thisAttempt, verdict));
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
