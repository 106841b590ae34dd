// One mutation through idempotencyLink: every attempt under one key, the wait between attempts,
// and what the caller is told (the result's context, a final error's `idempotency`, the events).
import type {
  Operation,
  OperationResultEnvelope,
  OperationResultObservable,
  OperationResultObserver,
  TRPCClientError,
} from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { Reason } from "../reasons.js";
import {
  BATCHED_MUTATION_MESSAGE,
  BatchedMutationError,
  opsWithHeaders,
  type IdempotencyContext,
  type IdempotencyEvent,
  type IdempotencyInfo,
} from "./headers.js";
import {
  classifyFailure,
  expiresAtOf,
  isReplayed,
  mayRetryAfter,
  responseOf,
  retryDelayMs,
  type BackoffOptions,
  type FailureClass,
} from "./retry-policy.js";
import { newIdempotencyKey } from "./intent-keys.js";

export interface IdempotencyLinkOptions extends BackoffOptions {
  /** Makes a key for a call that brings none (default: a random UUID). */
  newKey?: () => string;
  /** Injected by tests: when the link waits before a retry. */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  now?: () => number;
}

type Next<TRouter extends AnyTRPCRouter> = (
  op: Operation,
) => OperationResultObservable<TRouter, unknown>;
type Failure<TRouter extends AnyTRPCRouter> = TRPCClientError<TRouter>;

/**
 * Sends `op` until a final answer comes or the attempts run out, always with the same key (the
 * caller's, the intent's, or a new one), and passes the answer to `observer`.
 */
export class MutationAttempts<TRouter extends AnyTRPCRouter> {
  readonly key: string;
  private readonly context: IdempotencyContext;
  private attempt = 0;
  private timer: unknown;
  private subscription: { unsubscribe: () => void } | undefined;
  /** A final answer came, or the caller unsubscribed: no attempt after this. */
  private done = false;

  constructor(
    private readonly options: IdempotencyLinkOptions,
    private readonly op: Operation,
    private readonly next: Next<TRouter>,
    private readonly observer: OperationResultObserver<TRouter, unknown>,
  ) {
    this.context = op.context as IdempotencyContext;
    const intent = this.context.idempotencyIntent;
    const newKey = options.newKey ?? newIdempotencyKey;
    this.key = this.context.idempotencyKey ?? intent?.begin(op.input).key ?? newKey();
  }

  send(): void {
    this.attempt += 1;
    const attempt = this.attempt;
    this.report({ type: "attempt", key: this.key, attempt });
    const sentOp = { ...this.op, context: { ...this.op.context, idempotencyKey: this.key } };
    this.subscription = this.next(sentOp).subscribe({
      next: (envelope) => this.answered(envelope, attempt),
      error: (error) => this.failed(error, sentOp, attempt),
      complete: () => {
        this.done = true;
        this.observer.complete();
      },
    });
  }

  /** The caller unsubscribed: no retry is sent, and the one in flight is dropped. */
  stop(): void {
    this.done = true;
    // Called as given: a browser's clearTimeout needs no `this`.
    const cancel = this.options.clearTimeout ?? ((handle) => clearTimeout(handle as never));
    if (this.timer !== undefined) cancel(this.timer);
    this.subscription?.unsubscribe();
  }

  private answered(envelope: OperationResultEnvelope<unknown, Failure<TRouter>>, attempt: number) {
    const info = infoOf(envelope.context, this.key, attempt);
    this.settleIntent();
    this.report({ type: "answer", ok: true, status: 200, ...info });
    this.observer.next({ ...envelope, context: { ...envelope.context, idempotency: info } });
  }

  private failed(error: Failure<TRouter>, sentOp: Operation, attempt: number): void {
    const verdict = verdictOf(error, (this.options.now ?? Date.now)());
    const mayRetry = mayRetryAfter(attempt, this.options) && !this.op.signal?.aborted && !this.done;
    if (verdict.retry && mayRetry) return this.retryLater(verdict, attempt);
    this.done = true;
    // A final answer ends the intent; a give-up (no answer, or "ask again") or an abort keeps it,
    // so the next press sends the same key and gets the first answer.
    if (!verdict.retry && verdict.reason !== "aborted") this.settleIntent();
    explainBypass(error, verdict, sentOp);
    const info = infoOf((error as { meta?: { response?: unknown } }).meta, this.key, attempt);
    (error as { idempotency?: IdempotencyInfo }).idempotency = info;
    this.report({
      type: "answer",
      ok: false,
      status: verdict.status,
      reason: verdict.reason,
      ...info,
    });
    this.observer.error(error);
  }

  private retryLater(verdict: FailureClass & { retry: true }, attempt: number): void {
    const delayMs = retryDelayMs(attempt, verdict.retryAfterMs, this.options);
    const { reason, status } = verdict;
    this.report({ type: "retry", key: this.key, attempt, delayMs, reason, status });
    const schedule = this.options.setTimeout ?? ((fn, ms) => setTimeout(fn, ms)); // as cancel in stop()
    this.timer = schedule(() => this.send(), delayMs);
  }

  private settleIntent(): void {
    this.context.idempotencyIntent?.settle(this.op.input);
  }

  private report(event: IdempotencyEvent): void {
    try {
      this.context.onIdempotencyEvent?.(event);
    } catch {
      // a broken progress display must not break the request
    }
  }
}

/** The headers refused a batch: the wiring is wrong, and asking again cannot fix it. */
function verdictOf(error: unknown, nowMs: number): FailureClass {
  return (error as { cause?: unknown }).cause instanceof BatchedMutationError
    ? { retry: false, reason: "batched_mutation" }
    : classifyFailure(error, nowMs);
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
