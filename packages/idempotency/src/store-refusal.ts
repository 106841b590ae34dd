// The 503 of a store that could not serve, decided once: whether it was busy or gone, the words,
// and when to come back. Every writer of that answer (the engine, tRPC, plain HTTP, an app's own
// routes and its admission bound) takes the refusal from here and its headers from
// `refusalHeaders`; each transport only puts it in its own body shape.
import { CounterEvent, Header } from "./constants.js";
import { IdempotencyError } from "./errors.js";
import { Reason } from "./reasons.js";
import { classifyStoreFailure, retryAfterOf, StoreFailure } from "./store/unavailable.js";
import { preferenceApplied } from "./wait/prefer.js";

/**
 * The 503 for a store that could not serve: `store_busy` when it was up but no connection came
 * free in time, `store_unavailable` otherwise (also for an error nobody recognises, on the side
 * of "the store failed": it came from the store's own statements), counted as what it was.
 */
export function storeUnavailable(
  cause: unknown,
  count?: (e: CounterEvent) => void,
): IdempotencyError {
  if (classifyStoreFailure(cause) === StoreFailure.BUSY) {
    count?.(CounterEvent.STORE_BUSY);
    return new IdempotencyError(
      Reason.STORE_BUSY,
      "The idempotency key store is busy (no connection came free in time); nothing was executed",
      { cause, retryAfterSeconds: retryAfterOf(cause) ?? 1 },
    );
  }
  count?.(CounterEvent.STORE_ERRORS);
  return new IdempotencyError(
    Reason.STORE_UNAVAILABLE,
    "The idempotency key store cannot be reached; nothing was executed",
    { cause, retryAfterSeconds: 1 },
  );
}

/**
 * `store_busy` from a server that already works on as many requests as it takes, before any
 * store call: come back when the requests before this one will have finished.
 */
export function serverBusy(retryAfterSeconds: number): IdempotencyError {
  return new IdempotencyError(
    Reason.STORE_BUSY,
    "The server is busy (too many requests in progress); nothing was executed. Retry in a moment.",
    { retryAfterSeconds },
  );
}

/** A refusal's headers: Retry-After, and Preference-Applied for a wait it honoured. */
export function refusalHeaders(error: IdempotencyError): Headers {
  const headers = new Headers();
  if (error.retryAfterSeconds !== undefined)
    headers.set(Header.RETRY_AFTER, String(error.retryAfterSeconds));
  if (error.appliedWaitSeconds !== undefined)
    headers.set(Header.PREFERENCE_APPLIED, preferenceApplied(error.appliedWaitSeconds));
  return headers;
}
