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
import { MutationAttempts, type IdempotencyLinkOptions } from "./mutation-attempts.js";

export type { IdempotencyLinkOptions } from "./mutation-attempts.js";

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
  return () =>
    ({ op, next }) => {
      if (op.type !== "mutation") return next(op);
      return observable((observer) => {
        const attempts = new MutationAttempts<TRouter>(options, op, next, observer);
        attempts.send();
        return () => attempts.stop();
      });
    };
}
