// Errors at the API's edge. Every answer that is not a success carries `error.data.reason` (from
// the shared table, src/shared/reasons.ts) and `error.data.docs`, the errors page's anchor that the
// route also sends as `Link: <…>; rel="describedby"`.
import { getTRPCErrorShape, initTRPC, TRPCError, type TRPCDefaultErrorShape } from "@trpc/server";
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
 * tRPC's refusal of a batch longer than `maxBatchSize`, told apart by its message only: should a
 * tRPC release reword it, the answer stays a 400 (bad_request) and batch-limit.test.ts fails.
 */
const TRPC_BATCH_TOO_LARGE_MESSAGE = "Batch call exceeds maximum size";

const REASON_BY_CODE: Partial<Record<TRPCError["code"], Reason>> = {
  UNAUTHORIZED: Reason.UNAUTHORIZED,
  FORBIDDEN: Reason.FORBIDDEN,
  NOT_FOUND: Reason.NOT_FOUND,
  SERVICE_UNAVAILABLE: Reason.STORE_UNAVAILABLE,
};

/**
 * The reason an answer gives: the one its error carries (reasonOf, the engine's one reader), or
 * else the one its tRPC code stands for, so no answer goes without.
 */
export function errorReason(error: TRPCError): Reason {
  const found = reasonOf(error);
  if (isReason(found)) return found;
  if (error.cause instanceof ZodError) return Reason.INVALID_INPUT;
  if (error.code !== "BAD_REQUEST") return REASON_BY_CODE[error.code] ?? Reason.INTERNAL_ERROR;
  if (error.message === TRPC_BATCH_TOO_LARGE_MESSAGE) return Reason.BATCH_TOO_LARGE;
  return error.cause instanceof SyntaxError ? Reason.INVALID_JSON : Reason.BAD_REQUEST;
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
  const data = { ...shape.data, reason, docs: reasonDocsPath(reason) };
  return { ...shape, message, data: { ...data, ...(zodError ? { zodError } : {}) } };
}

/** The options of the app's initTRPC (trpc.ts): this formatter, and never a stack (isDev). */
export const TRPC_OPTIONS = { isDev: false, errorFormatter: formatError };
/** tRPC's configuration from the same options, for answers given before tRPC runs. */
const shapeConfig = initTRPC.create(TRPC_OPTIONS)._config;

/**
 * An error answered before tRPC runs (the front door's, a cross-site post), as tRPC would answer
 * it: tRPC's own error shape through this app's formatter, with its reason's Link.
 */
export function trpcErrorResponse(error: TRPCError, headers = new Headers()): Response {
  const args = { type: "unknown", path: undefined, input: undefined, ctx: undefined } as const;
  const shape = getTRPCErrorShape({ config: shapeConfig, error, ...args });
  headers.set("Link", describedByLink(shape.data.reason));
  return Response.json({ error: shape }, { status: shape.data.httpStatus, headers });
}

/** An engine refusal answered before tRPC runs (the admission bound's), with its headers. */
export const trpcRefusal = (refusal: IdempotencyError) =>
  trpcErrorResponse(toTRPCError(refusal), refusalHeaders(refusal));

/** An AppError as tRPC's error, its status deciding the code (the engine's one table). */
export function fromAppError(error: AppError): TRPCError {
  const status = error.status as keyof typeof TRPC_CODE_BY_STATUS;
  const code = TRPC_CODE_BY_STATUS[status] ?? "INTERNAL_SERVER_ERROR";
  return new TRPCError({ code, message: error.message, cause: error });
}

/**
 * What an error thrown below the API's edge becomes: an AppError its own status, a lost database
 * the engine's 503 (counted through `count`), an engine refusal and anything else unchanged (null).
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

/** `Link: </docs/errors#reason>; rel="describedby"` for an answer with errors (the IETF draft). */
export function describedByHeaders(errors: readonly TRPCError[]): Headers | undefined {
  const first = errors[0];
  if (!first) return undefined;
  return new Headers({ Link: describedByLink(errorReason(first)) });
}
