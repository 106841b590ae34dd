// When may the browser send a mutation again with the same Idempotency-Key, and after how long.
// Pure functions (unit-tested in idempotency-link.test.ts); the link in idempotency-link.ts applies
// them. Retried: a lost request or response (the server may have run it), `409
// request_in_progress` (the first request still holds the key) and `503 store_unavailable`
// (nothing ran). Every other answer is final.

export const REPLAYED_HEADER = "Idempotent-Replayed";

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

/**
 * Sent as `Prefer: wait=N` (RFC 7240) with every mutation: if another request with the same key
 * (a double-click, a retry after a lost response) is still running, the server waits up to N
 * seconds for its answer and replays it, instead of a 409 that would cost a whole Retry-After
 * round. 10 s matches the engine's default cap (maxWaitMs) and stays below the browser's and the
 * proxies' timeouts; past it the 409 and the retry below still apply.
 */
export const PREFER_WAIT_SECONDS = 10;

export type RetryReason = "network" | "request_in_progress" | "store_unavailable";

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

export interface ErrorLike {
  name?: unknown;
  data?: { httpStatus?: unknown; reason?: unknown } | null;
  meta?: { response?: unknown } | null;
  cause?: unknown;
}

export function responseOf(meta: ErrorLike["meta"]): Response | undefined {
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
