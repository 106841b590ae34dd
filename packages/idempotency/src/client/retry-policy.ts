// When may a client send a mutation again with the same Idempotency-Key, and after how long. Pure
// functions; the link (link.ts) applies them. Retried: a lost request or response (the server may
// have run it), `409 request_in_progress` (the first request still holds the key) and a 503 (the
// key store could not serve it: nothing ran, or a commit awaits confirmation). Every other answer
// is final, `409 unique_violation` and every other 4xx included: sending it again gives the same
// answer back, replayed.
import { Header } from "../constants.js";
import { Reason } from "../reasons.js";

/**
 * Six attempts: with the backoff below and the server's `Retry-After` of 1–3 s that covers about
 * ten seconds, and each attempt may also wait on the server (`Prefer: wait`): longer than an
 * ordinary mutation takes, short enough that a person is told rather than kept waiting.
 */
const DEFAULT_MAX_ATTEMPTS = 6;
/** First backoff step: short, because a lost response is usually a blip. Doubles per attempt. */
const DEFAULT_BASE_DELAY_MS = 250;
/**
 * The link's own backoff (no `Retry-After`) never grows past this: a person is watching. It does not
 * cap what the server asked for: a server that says `Retry-After: 30` is not asked again sooner.
 */
const DEFAULT_MAX_DELAY_MS = 5_000;

/**
 * Sent as `Prefer: wait=N` (RFC 7240) with every mutation: if another request with the same key
 * (a double-click, a retry after a lost response) is still running, the server waits up to N
 * seconds for its answer and replays it, instead of a 409 that would cost a whole Retry-After
 * round. 10 s matches the engine's default cap (maxWaitMs) and stays below browsers' and proxies'
 * timeouts; past it the 409 and the retry still apply.
 */
export const PREFER_WAIT_SECONDS = 10;

/**
 * Why the link sends a mutation again: no answer at all, or one of the server's "ask again"
 * reasons.
 */
export type RetryReason =
  | "network"
  | typeof Reason.IN_PROGRESS
  | typeof Reason.STORE_UNAVAILABLE
  | typeof Reason.STORE_BUSY
  | typeof Reason.COMMIT_UNCONFIRMED
  | "service_unavailable";

const RETRIED_503_REASONS: ReadonlySet<string> = new Set([
  Reason.STORE_UNAVAILABLE,
  Reason.STORE_BUSY,
  Reason.COMMIT_UNCONFIRMED,
]);

/**
 * `Retry-After` is delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or bad.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined; // IMF-fixdate: "Wed, 21 Oct 2026 07:28:00 GMT"
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

export interface BackoffOptions {
  /** Requests per mutation, the first included (default 6). */
  maxAttempts?: number;
  /** The first backoff step (default 250 ms). */
  baseDelayMs?: number;
  /** The largest backoff step (default 5 s). */
  maxDelayMs?: number;
  /** A number in [0, 1): Math.random unless given (tests pin it). */
  random?: () => number;
}

/** Whether attempt `attempt` may be followed by another. */
export const mayRetryAfter = (attempt: number, opts: BackoffOptions) =>
  attempt < (opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);

/**
 * How long to wait before attempt `attempt + 1`, with full jitter: every refused client drawing its
 * own wait, so a crowd refused at once does not come back at once.
 *
 * - The server said when (`Retry-After`): never sooner than that, spread over as long again above
 *   it (or over the backoff step, if longer). No cap: asking a refusing server sooner than it said
 *   is how a crowd that was refused together keeps the server refusing.
 * - It did not: anywhere from 0 to the exponential backoff step (`baseDelayMs`, doubled per
 *   attempt, at most `maxDelayMs`).
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  opts: BackoffOptions,
): number {
  const { random = Math.random, baseDelayMs = DEFAULT_BASE_DELAY_MS } = opts;
  const step = Math.min(
    opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
    baseDelayMs * 2 ** Math.max(0, attempt - 1),
  );
  if (retryAfterMs === undefined) return Math.floor(random() * step);
  const floor = Math.max(0, retryAfterMs);
  return floor + Math.floor(random() * Math.max(floor, step));
}

export type FailureClass =
  | { retry: true; reason: RetryReason; status?: number; retryAfterMs?: number }
  | { retry: false; status?: number; reason?: string };

interface ErrorLike {
  data?: { httpStatus?: unknown; reason?: unknown } | null;
  meta?: { response?: unknown } | null;
}

type HeadersLike = { get(name: string): string | null };

/** The HTTP response tRPC's httpLink keeps in an error's `meta` or a result's `context`. */
export function responseOf(
  holder: { response?: unknown } | null | undefined,
): { status: number; headers: HeadersLike } | undefined {
  const response = holder?.response as { status?: unknown; headers?: HeadersLike } | undefined;
  return response && typeof response.status === "number" && response.headers
    ? (response as { status: number; headers: HeadersLike })
    : undefined;
}

function isAbort(error: unknown): boolean {
  const e = error as { name?: unknown; cause?: { name?: unknown } | null } | null;
  return e?.name === "AbortError" || e?.cause?.name === "AbortError";
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
  const retryAfterMs = parseRetryAfter(response?.headers.get(Header.RETRY_AFTER), nowMs);
  if (status === 409 && reason === Reason.IN_PROGRESS)
    return { retry: true, reason, status, retryAfterMs };
  // Any 503: the engine's own say "retry with the same key"; one without a reason (a proxy with
  // no server to send to) never reached a handler.
  if (status === 503) {
    const why = RETRIED_503_REASONS.has(reason!) ? (reason as RetryReason) : "service_unavailable";
    return { retry: true, reason: why, status, retryAfterMs };
  }
  return { retry: false, status, reason };
}

/** True when the server says this answer is a replay of the key's first answer. */
export function isReplayed(headers: HeadersLike | undefined): boolean {
  return headers?.get(Header.REPLAYED)?.toLowerCase() === "true";
}

/** When the server forgets the key (`Idempotency-Key-Expires`, an HTTP date), if it said. */
export function expiresAtOf(headers: HeadersLike | undefined): Date | undefined {
  const ms = Date.parse(headers?.get(Header.EXPIRES) ?? "");
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
