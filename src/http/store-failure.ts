// The 503 of a plain route (sign-in, sign-out, the metrics) whose database call failed: the
// engine's own refusal for its store (`storeUnavailable`: busy or unavailable, and its
// Retry-After, the pool's own estimate when it refused as busy) with its headers, written as the
// plain routes' error answer. Only the words are the route's.
import { refusalHeaders, storeUnavailable } from "@once/idempotency/operator";
import { Reason } from "@/shared/reasons";
import { plainError } from "./plain-error";

export function storeFailureAnswer(
  error: unknown,
  messages: { busy: string; unavailable: string },
): Response {
  const failure = storeUnavailable(error);
  const busy = failure.reason === Reason.STORE_BUSY;
  const headers = Object.fromEntries(refusalHeaders(failure));
  return plainError(503, failure.reason, busy ? messages.busy : messages.unavailable, headers);
}
