// The 503 of a plain route whose database call failed: the engine's own store refusal (reason,
// Retry-After) written as the plain routes' error answer, in the route's words.
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
