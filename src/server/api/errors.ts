// Errors at the API's edge. Every answer that is not a success carries `error.data.reason` (from
// the shared table, src/shared/reasons.ts) and `error.data.docs`, the errors page's anchor that the
// route also sends as `Link: <…>; rel="describedby"`.
import { TRPCError } from "@trpc/server";
import { IdempotencyError, reasonOf as reasonCarriedBy } from "@once/idempotency";
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import { ZodError } from "zod";
import { AppError } from "@/shared/app-error";
import { describedByLink, isReason, Reason, reasonDocsPath } from "@/shared/reasons";

type Code = TRPCError["code"];

const CODE_BY_STATUS: Record<number, Code> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  412: "PRECONDITION_FAILED",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
};

/**
 * tRPC's refusal of a batch longer than `maxBatchSize` (src/server/api/handler.ts), thrown before
 * any call is resolved. Its message is all that tells it apart; should a tRPC release reword it,
 * the answer stays a 400 (as bad_request) and src/server/api/batch-limit.test.ts fails.
 */
export const TRPC_BATCH_TOO_LARGE_MESSAGE = "Batch call exceeds maximum size";

/** The reason an error stands for; every code has one, so no answer goes without. */
export function reasonOf(error: TRPCError): Reason {
  const found = reasonCarriedBy(error);
  if (isReason(found)) return found;
  if (error.cause instanceof ZodError) return Reason.INVALID_INPUT;
  switch (error.code) {
    case "BAD_REQUEST":
      if (error.message === TRPC_BATCH_TOO_LARGE_MESSAGE) return Reason.BATCH_TOO_LARGE;
      return error.cause instanceof SyntaxError ? Reason.INVALID_JSON : Reason.BAD_REQUEST;
    case "UNAUTHORIZED":
      return Reason.UNAUTHORIZED;
    case "FORBIDDEN":
      return Reason.FORBIDDEN;
    case "NOT_FOUND":
      return Reason.NOT_FOUND;
    case "SERVICE_UNAVAILABLE":
      return Reason.STORE_UNAVAILABLE;
    default:
      return Reason.INTERNAL;
  }
}

export const docsOf = reasonDocsPath;

/** An AppError as tRPC's error, its status deciding the code. */
export function fromAppError(error: AppError): TRPCError {
  return new TRPCError({ code: CODE_BY_STATUS[error.status] ?? "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
}

/**
 * The store could not serve, whatever statement found out: 503 store_busy when the pool had no
 * connection free in time (the database is up), store_unavailable otherwise (the engine's one
 * classifier decides).
 */
export function storeUnavailableError(cause: unknown): TRPCError {
  const busy = classifyStoreFailure(cause) === StoreFailure.BUSY;
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: busy
      ? "The database is busy (no connection came free in time); nothing was executed. Retry in a moment."
      : "The database cannot be reached; nothing was executed. Retry in a moment.",
    cause: Object.assign(new Error(busy ? "store busy" : "store unavailable", { cause }), { reason: busy ? Reason.STORE_BUSY : Reason.STORE_UNAVAILABLE }),
  });
}

/**
 * What an error thrown below the API's edge becomes: an AppError its own status, a lost database
 * 503 (so clients retry), an engine refusal as the engine said; anything else passes unchanged.
 */
export function translateError(error: TRPCError): TRPCError | null {
  const cause = error.cause;
  if (cause instanceof AppError) return fromAppError(cause);
  if (cause instanceof IdempotencyError) return null;
  if (error.code === "INTERNAL_SERVER_ERROR" && classifyStoreFailure(cause) !== null) return storeUnavailableError(cause);
  return null;
}

/**
 * The counter event for a store refusal the engine did not count itself (a query, the principal's
 * lookup): the engine counts what happens inside a mutation.
 */
export function uncountedStoreRefusal(error: TRPCError): "store_busy" | "store_errors" | null {
  if (error.cause instanceof IdempotencyError) return null;
  const reason = reasonOf(error);
  return reason === Reason.STORE_BUSY ? "store_busy" : reason === Reason.STORE_UNAVAILABLE ? "store_errors" : null;
}

/** `Link: </docs/errors#reason>; rel="describedby"` for an answer with errors (the IETF draft's advice). */
export function describedByHeaders(errors: readonly TRPCError[]): Headers | undefined {
  const first = errors[0];
  if (!first) return undefined;
  return new Headers({ Link: describedByLink(reasonOf(first)) });
}
