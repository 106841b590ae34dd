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
// answer (2xx, or any other 4xx such as out of stock) is never retried. Whether the answer was a
// replay (`Idempotent-Replayed: true`) is put on the result's context and reported to the caller.
import { TRPCClientError, type Operation, type TRPCLink } from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { observable } from "@trpc/server/observable";

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const DEMO_DELAY_HEADER = "x-demo-delay-ms";

// ---------------------------------------------------------------------------------------------
// Tunables.

/**
 * Six attempts: with the backoff below and the server's `Retry-After` of 1–3 s that covers about
 * ten seconds, longer than any checkout takes (the server's lease is 30 s by default, but a request
 * that is still running after ten seconds is better reported to the person than waited on).
 */
export const DEFAULT_MAX_ATTEMPTS = 6;
/** First backoff step: short, because a lost response is usually a blip. Doubles per attempt. */
export const DEFAULT_BASE_DELAY_MS = 250;
/** No single wait is longer than this, whatever `Retry-After` says: a person is watching. */
export const DEFAULT_MAX_DELAY_MS = 5_000;

// ---------------------------------------------------------------------------------------------
// What the link reads from and writes to an operation's context.

export type RetryReason = "network" | "request_in_progress" | "store_unavailable";

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
// Pure parts (unit-tested in idempotency-link.test.ts).

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** `Retry-After` is delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or bad. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined; // IMF-fixdate: "Wed, 21 Oct 2026 07:28:00 GMT"
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * How long to wait before attempt `attempt + 1`: what the server asked for when it said
 * (`Retry-After`), else exponential backoff from `baseDelayMs`; never more than `maxDelayMs`.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, opts: BackoffOptions): number {
  const backoff = opts.baseDelayMs * 2 ** Math.max(0, attempt - 1);
  const wanted = retryAfterMs ?? backoff;
  return Math.min(opts.maxDelayMs, Math.max(0, wanted));
}

export type FailureClass = { retry: true; reason: RetryReason; status?: number; retryAfterMs?: number } | { retry: false; status?: number; reason?: string };

interface ErrorLike {
  name?: unknown;
  data?: { httpStatus?: unknown; reason?: unknown } | null;
  meta?: { response?: unknown } | null;
  cause?: unknown;
}

function responseOf(meta: ErrorLike["meta"]): Response | undefined {
  const response = meta?.response;
  return response && typeof (response as Response).status === "number" ? (response as Response) : undefined;
}

function isAbort(error: unknown): boolean {
  const e = error as { name?: unknown; cause?: unknown } | null;
  if (!e) return false;
  if (e.name === "AbortError") return true;
  return (e.cause as { name?: unknown } | null | undefined)?.name === "AbortError";
}

/** Decides whether a failed mutation may be sent again with the same key. */
export function classifyFailure(error: unknown, nowMs: number = Date.now()): FailureClass {
  if (isAbort(error)) return { retry: false, reason: "aborted" };
  const e = (error ?? {}) as ErrorLike;
  const response = responseOf(e.meta);
  const status = typeof e.data?.httpStatus === "number" ? e.data.httpStatus : response?.status;
  const reason = typeof e.data?.reason === "string" ? e.data.reason : undefined;
  // No HTTP answer at all: the request, or its response, was lost. The server may have run it;
  // the same key makes asking again safe.
  if (status === undefined) return { retry: true, reason: "network" };
  const retryAfterMs = parseRetryAfter(response?.headers.get("Retry-After"), nowMs);
  if (status === 409 && reason === "request_in_progress") return { retry: true, reason, status, retryAfterMs };
  if (status === 503) return { retry: true, reason: "store_unavailable", status, retryAfterMs };
  return { retry: false, status, reason };
}

/** True when the server says this answer is a replay of the key's first answer. */
export function isReplayedResponse(response: unknown): boolean {
  const headers = (response as { headers?: { get?: (name: string) => string | null } } | undefined)?.headers;
  return headers?.get?.(REPLAYED_HEADER)?.toLowerCase() === "true";
}

/** The headers httpLink should send for `op` (use as its `headers` option). */
export function idempotencyHeaders({ op }: { op: Pick<Operation, "type" | "context"> }): Record<string, string> {
  if (op.type !== "mutation") return {};
  const ctx = op.context as IdempotencyOpContext;
  const headers: Record<string, string> = {};
  if (ctx.idempotencyKey) headers[IDEMPOTENCY_KEY_HEADER] = ctx.idempotencyKey;
  if (ctx.demoDelayMs && ctx.demoDelayMs > 0) headers[DEMO_DELAY_HEADER] = String(Math.round(ctx.demoDelayMs));
  return headers;
}

/** Reads the idempotency facts off a failed mutation's error (e.g. a replayed out-of-stock answer). */
export function idempotencyInfoOfError(error: unknown): IdempotencyInfo | undefined {
  return (error as { idempotency?: IdempotencyInfo } | null)?.idempotency;
}

// ---------------------------------------------------------------------------------------------
// The link.

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
              const response = responseOf((error as ErrorLike).meta);
              const replayed = isReplayedResponse(response);
              const info: IdempotencyInfo = { key, replayed, attempts: thisAttempt };
              if (error instanceof TRPCClientError || (error && typeof error === "object")) {
                (error as { idempotency?: IdempotencyInfo }).idempotency = info;
              }
              report({
                type: "answer",
                key,
                attempts: thisAttempt,
                replayed,
                ok: false,
                status: verdict.status,
                reason: "reason" in verdict ? verdict.reason : undefined,
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
