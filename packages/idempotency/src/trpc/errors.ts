// The engine's refusals and stored failures as tRPC errors. A reason travels on the error's
// `cause.reason`: your errorFormatter puts it in `error.data.reason` (see the README).
import { TRPCError } from "@trpc/server";
import { IdempotencyError, trpcCodeOf } from "../errors.js";

/** A deterministic failure as stored and replayed: enough to rebuild the same error body. */
export interface StoredError {
  code: TRPCError["code"];
  message: string;
  reason?: string;
}

export function toTRPCError(error: IdempotencyError): TRPCError {
  return new TRPCError({ code: trpcCodeOf(error), message: error.message, cause: error });
}

/** The reason of an error a handler threw: `error.reason`, or its cause's. */
export function reasonOf(error: TRPCError): string | undefined {
  for (const candidate of [error, error.cause]) {
    const reason = (candidate as { reason?: unknown } | undefined)?.reason;
    if (typeof reason === "string") return reason;
  }
  return undefined;
}

/** Carries a stored failure's reason as the cause of the rebuilt error. */
class StoredFailure extends Error {
  constructor(
    readonly reason: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "StoredFailure";
  }
}

export function replayedError(stored: StoredError): TRPCError {
  return new TRPCError({ code: stored.code, message: stored.message, cause: new StoredFailure(stored.reason, stored.message) });
}
