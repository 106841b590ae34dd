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
import type { IdempotencyInfo } from "./headers.js";
import { newIdempotencyKey } from "./intent-keys.js";
import { MutationAttempts, type AttemptSettings } from "./mutation-attempts.js";
import {
  DEFAULT_BASE_DELAY_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_DELAY_MS,
  type BackoffOptions,
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

export function idempotencyLink<TRouter extends AnyTRPCRouter>(
  options: IdempotencyLinkOptions = {},
): TRPCLink<TRouter> {
  const settings = settingsOf(options);
  return () =>
    ({ op, next }) => {
      if (op.type !== "mutation") return next(op);
      return observable((observer) => {
        const attempts = new MutationAttempts<TRouter>(settings, op, next, observer);
        attempts.send();
        return () => attempts.stop();
      });
    };
}

function settingsOf(options: IdempotencyLinkOptions): AttemptSettings {
  return {
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    backoff: {
      baseDelayMs: options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
      maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
      ...(options.random ? { random: options.random } : {}),
    },
    schedule: options.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms)),
    cancel:
      options.clearTimeout ??
      ((handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>)),
    now: options.now ?? Date.now,
    makeKey: options.newKey ?? newIdempotencyKey,
  };
}
