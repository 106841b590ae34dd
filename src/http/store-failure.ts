// The 503 of a plain route (sign-in, sign-out) whose database call failed: the same decision the
// engine makes for its own store (`storeUnavailable`: busy or unavailable, and the Retry-After,
// the pool's own estimate when it refused as busy), written as the plain routes' error answer.
// One decision for every store answer; only the words differ per route. (The admission bound's
// refusal, src/server/edge/admission.ts, answers before any database call, in tRPC's shape.)
import { storeUnavailable } from "@once/idempotency/operator";
import { Reason } from "@/shared/reasons";
import { plainError } from "./plain-error";

export function storeFailureAnswer(
  error: unknown,
  messages: { busy: string; unavailable: string },
): Response {
  const failure = storeUnavailable(error);
  const busy = failure.reason === Reason.STORE_BUSY;
  return plainError(
    503,
    busy ? Reason.STORE_BUSY : Reason.STORE_UNAVAILABLE,
    busy ? messages.busy : messages.unavailable,
    { "Retry-After": String(failure.retryAfterSeconds ?? 1) },
  );
}
