// One error base with a named subclass per refusal. Each carries its `reason` (error.data.reason on
// the wire) and HTTP status; `toTRPCCode` maps them to tRPC codes in one table.
import { Reason } from "./constants";
import type { KeyRecord } from "./store";

export abstract class IdempotencyError extends Error {
  abstract readonly reason: Reason;
  abstract readonly httpStatus: number;
  /** Seconds for Retry-After, where the caller should come back later. */
  readonly retryAfterSeconds?: number;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export class KeyMissingError extends IdempotencyError {
  readonly reason = Reason.KEY_MISSING;
  readonly httpStatus = 400;
}

export class KeyInvalidError extends IdempotencyError {
  readonly reason = Reason.KEY_INVALID;
  readonly httpStatus = 400;
}

export class BatchNotAllowedError extends IdempotencyError {
  readonly reason = Reason.BATCH_NOT_ALLOWED;
  readonly httpStatus = 400;
  constructor() {
    super("An Idempotency-Key cannot cover a batch of several calls: send each mutation on its own");
  }
}

export class KeyReusedError extends IdempotencyError {
  readonly reason = Reason.KEY_REUSED;
  readonly httpStatus = 422;
  constructor(readonly record: KeyRecord) {
    super("This Idempotency-Key was already used for a different request");
  }
}

export class RequestInProgressError extends IdempotencyError {
  readonly reason = Reason.IN_PROGRESS;
  readonly httpStatus = 409;
  constructor(message: string, retryAfterSeconds: number, readonly record?: KeyRecord) {
    super(message, { retryAfterSeconds });
  }
}

export class TooManyKeysError extends IdempotencyError {
  readonly reason = Reason.TOO_MANY_KEYS;
  readonly httpStatus = 429;
}

export class StoreUnavailableError extends IdempotencyError {
  readonly reason = Reason.STORE_UNAVAILABLE;
  readonly httpStatus = 503;
}

/**
 * The business transaction found its lease taken over (fencing): it rolled back. Answered as 409
 * in progress, since the request that took over is running or done; a retry gets its answer.
 */
export class LeaseLostError extends RequestInProgressError {
  constructor(retryAfterSeconds: number) {
    super("This request's lease was taken over by a retry; retry to get its answer", retryAfterSeconds);
  }
}

export const TRPC_CODE_BY_STATUS = {
  400: "BAD_REQUEST",
  409: "CONFLICT",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
} as const;

export function toTRPCCode(error: IdempotencyError) {
  return TRPC_CODE_BY_STATUS[error.httpStatus as keyof typeof TRPC_CODE_BY_STATUS];
}
