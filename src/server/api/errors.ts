// Errors at the API's edge. Every answer that is not a success carries `error.data.reason` (from
// the shared table, src/shared/reasons.ts) and `error.data.docs`, the errors page's anchor that the
// route also sends as `Link: <…>; rel="describedby"`.
import { TRPCError } from "@trpc/server";
import { IdempotencyError, isStoreUnavailable } from "@once/idempotency";
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

/** The reason an error stands for; every code has one, so no answer goes without. */
export function reasonOf(error: TRPCError): Reason {
  const cause = error.cause as { reason?: unknown } | undefined;
  if (isReason(cause?.reason)) return cause.reason;
  if (error.cause instanceof ZodError) return Reason.INVALID_INPUT;
  switch (error.code) {
    case "BAD_REQUEST":
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

/** The store is gone: 503 store_unavailable, whatever statement found out. */
export function storeUnavailableError(cause: unknown): TRPCError {
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message: "The database cannot be reached; nothing was executed. Retry in a moment.",
    cause: Object.assign(new Error("store unavailable", { cause }), { reason: Reason.STORE_UNAVAILABLE }),
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
  if (error.code === "INTERNAL_SERVER_ERROR" && isStoreUnavailable(cause)) return storeUnavailableError(cause);
  return null;
}

/** `Link: </docs/errors#reason>; rel="describedby"` for an answer with errors (the IETF draft's advice). */
export function describedByHeaders(errors: readonly TRPCError[]): Headers | undefined {
  const first = errors[0];
  if (!first) return undefined;
  return new Headers({ Link: describedByLink(reasonOf(first)) });
}
