// The engine's refusals and stored failures as tRPC errors. `reasonOf(error)` (reason-of.ts)
// finds the reason on them for your errorFormatter.
import { TRPCError } from "@trpc/server";
import { IdempotencyError, TRPC_CODE_BY_STATUS, trpcCodeOf } from "../errors.js";
import { StoredFailure } from "../reason-of.js";

/**
 * A deterministic failure as stored and replayed: enough to rebuild the same error body. A unique
 * violation, stored by the engine itself, has no `code` (its status says 409) and names `fields`.
 */
export interface StoredError {
  code?: TRPCError["code"];
  message: string;
  reason?: string;
  fields?: string[];
}

export function toTRPCError(error: IdempotencyError): TRPCError {
  return new TRPCError({ code: trpcCodeOf(error), message: error.message, cause: error });
}

export function replayedError(stored: StoredError, status: number): TRPCError {
  const code =
    stored.code ?? TRPC_CODE_BY_STATUS[status as keyof typeof TRPC_CODE_BY_STATUS] ?? "BAD_REQUEST";
  return new TRPCError({
    code,
    message: stored.message,
    cause: new StoredFailure(stored.reason, stored.message, stored.fields),
  });
}
