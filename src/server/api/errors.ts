// Errors at the API's edge. Every answer that is not a success carries `error.data.reason` (from
// the shared table, src/shared/reasons.ts) and `error.data.docs`, the errors page's anchor that the
// route also sends as `Link: <…>; rel="describedby"`.
import {
  getTRPCErrorShape,
  TRPCError,
  type TRPCDefaultErrorShape,
  type TRPCRootConfig,
} from "@trpc/server";
import { IdempotencyError, reasonOf } from "@once/idempotency";
import {
  classifyStoreFailure,
  refusalHeaders,
  storeUnavailable,
  TRPC_CODE_BY_STATUS,
  type CounterEvent,
} from "@once/idempotency/operator";
import { toTRPCError } from "@once/idempotency/trpc";
import { z, ZodError } from "zod";
import { AppError } from "@/shared/app-error";
import { describedByLink, isReason, Reason, reasonDocsPath } from "@/shared/reasons";

/**
 * tRPC's refusal of a batch longer than `maxBatchSize` (src/server/api/handler.ts), thrown before
 * any call is resolved. Its message is all that tells it apart; should a tRPC release reword it,
 * the answer stays a 400 (as bad_request) and src/server/api/batch-limit.test.ts fails.
 */
export const TRPC_BATCH_TOO_LARGE_MESSAGE = "Batch call exceeds maximum size";

/**
 * The reason an answer gives: the one its error carries (reasonOf, the engine's one reader), or
 * else the one its tRPC code stands for, so no answer goes without.
 */
export function errorReason(error: TRPCError): Reason {
  const found = reasonOf(error);
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

/**
 * tRPC's error shape as this app sends it: every error with `data.reason` and `data.docs`, invalid
 * input with its zod issues. Internal errors say nothing about the server's insides to the caller;
 * invalid input reads as sentences (the issues themselves are in data.zodError).
 */
export function formatError({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) {
  const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : undefined;
  const reason = errorReason(error);
  const message =
    error.code === "INTERNAL_SERVER_ERROR"
      ? "Internal server error"
      : error.cause instanceof ZodError
        ? `Invalid input: ${z.prettifyError(error.cause)}`
        : shape.message;
  const { stack: _stack, ...data } = shape.data;
  return {
    ...shape,
    message,
    data: { ...data, reason, docs: reasonDocsPath(reason), ...(zodError ? { zodError } : {}) },
  };
}

/** What tRPC's getErrorShape reads of its configuration: this app's formatter, never a stack. */
const SHAPE_CONFIG = { isDev: false, errorFormatter: formatError } as unknown as TRPCRootConfig<{
  ctx: object;
  meta: object;
  errorShape: ReturnType<typeof formatError>;
  transformer: false;
}>;

/**
 * An engine refusal answered before tRPC runs (the admission bound's, at the front door), as tRPC
 * would answer it: tRPC's own error shape through this app's formatter, the refusal's headers.
 */
export function trpcRefusal(refusal: IdempotencyError): Response {
  const error = toTRPCError(refusal);
  const shape = getTRPCErrorShape({
    config: SHAPE_CONFIG,
    error,
    type: "unknown",
    path: undefined,
    input: undefined,
    ctx: undefined,
  });
  const headers = refusalHeaders(refusal);
  headers.set("Link", describedByLink(refusal.reason as Reason));
  return Response.json({ error: shape }, { status: refusal.httpStatus, headers });
}

/** An AppError as tRPC's error, its status deciding the code (the engine's one table). */
export function fromAppError(error: AppError): TRPCError {
  const code =
    TRPC_CODE_BY_STATUS[error.status as keyof typeof TRPC_CODE_BY_STATUS] ??
    "INTERNAL_SERVER_ERROR";
  return new TRPCError({ code, message: error.message, cause: error });
}

/**
 * What an error thrown below the API's edge becomes: an AppError its own status, a lost database
 * the engine's 503 (so clients retry; counted through `count`: the engine counts only what it
 * answers itself), an engine refusal as the engine said; anything else passes unchanged.
 */
export function translateError(
  error: TRPCError,
  count: (event: CounterEvent) => void,
): TRPCError | null {
  const cause = error.cause;
  if (cause instanceof AppError) return fromAppError(cause);
  if (cause instanceof IdempotencyError) return null;
  if (error.code === "INTERNAL_SERVER_ERROR" && classifyStoreFailure(cause) !== null)
    return toTRPCError(storeUnavailable(cause, count));
  return null;
}

/**
 * `Link: </docs/errors#reason>; rel="describedby"` for an answer with errors (the IETF draft's
 * advice).
 */
export function describedByHeaders(errors: readonly TRPCError[]): Headers | undefined {
  const first = errors[0];
  if (!first) return undefined;
  return new Headers({ Link: describedByLink(errorReason(first)) });
}
