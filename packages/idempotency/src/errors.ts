// The engine's one error class. A refusal is a reason (see reasons.ts); its status comes from the
// reasons table, so no two places can disagree about it.
import { isMarked, mark } from "./brand.js";
import { REASONS, type Reason } from "./reasons.js";
import type { KeyRecord } from "./store/types.js";

export class IdempotencyError extends Error {
  /** `instanceof` holds for this class's errors from any copy of the package (brand.ts). */
  static readonly brand: string = "IdempotencyError";
  static [Symbol.hasInstance](value: unknown): boolean {
    return isMarked(value, this.brand);
  }

  readonly httpStatus: number;
  /** Seconds for Retry-After, where the caller should come back later. */
  readonly retryAfterSeconds?: number;
  /** The key's record, where one was read (mismatch, in progress). */
  readonly record?: KeyRecord;
  /**
   * Set when the request waited for its key (Prefer: wait) before this answer:
   * `Preference-Applied`.
   */
  appliedWaitSeconds?: number;

  constructor(
    readonly reason: Reason,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number; record?: KeyRecord } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "IdempotencyError";
    this.httpStatus = REASONS[reason].status;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.record = options.record;
    mark(this, IdempotencyError.brand);
  }
}

/**
 * tRPC's code for each status an answer may carry: the engine's own, and those of the failures an
 * app's handlers store for replay (401 … 415). One table, so an app maps its own errors with it
 * too.
 */
export const TRPC_CODE_BY_STATUS = {
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
} as const;

export function trpcCodeOf(error: IdempotencyError) {
  return TRPC_CODE_BY_STATUS[REASONS[error.reason].status];
}
