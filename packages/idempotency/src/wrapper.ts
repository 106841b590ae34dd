// The plain entry point, for callers that are not tRPC (a payment webhook, queue consumers,
// workers): the same protocol and guarantees as the middleware.
import { isMarked, mark } from "./brand.js";
import type { IdempotencyEngine } from "./engine.js";
import { IdempotencyError } from "./errors.js";
import { parseIdempotencyKey } from "./key.js";
import { jsonOutcome, type HandlerOutcome } from "./outcome.js";
import type { SqlTransaction } from "./store/types.js";

/**
 * Throw this from a handler for a deterministic failure: the business transaction rolls back, the
 * key stores `status` and `body`, and every retry gets them back. Any other error is transient:
 * the key is released and the retry runs anew, except a unique violation (Prisma's P2002) from
 * the handler's own writes: that is stored as `409` with body `{ reason: "unique_violation",
 * message, fields }`.
 */
export class DeterministicError extends Error {
  static [Symbol.hasInstance](value: unknown): boolean {
    return isMarked(value, "DeterministicError"); // thrown by any copy of the package (brand.ts)
  }

  constructor(
    readonly status: number,
    readonly body: unknown,
    message = `deterministic failure (${status})`,
  ) {
    super(message);
    this.name = "DeterministicError";
    mark(this, "DeterministicError");
  }
}

export interface IdempotentCall {
  scope: string;
  /** The idempotency key, as received (bare or RFC 8941 quoted). */
  key: string;
  /** A stable name for the operation: part of the fingerprint. */
  operation: string;
  /**
   * What the caller asked for: a retry with another request under the same key is refused (422).
   */
  request: unknown;
  /**
   * Seconds to wait for the key's first request when it is still in flight, instead of a 409
   * (an HTTP caller passes `Prefer: wait=N` here; capped by maxWaitMs). The result, or the
   * IdempotencyError, then carries `appliedWaitSeconds` for `Preference-Applied`.
   */
  waitSeconds?: number;
}

export interface IdempotentResult<T> {
  ok: boolean;
  status: number;
  /** The answer's exact bytes, as first sent: send these to be byte for byte the same on replay. */
  bodyText: string;
  body: T | unknown;
  replayed: boolean;
  expiresAt: Date;
  /** Set when the call waited for its key first: send `Preference-Applied: wait=<this>`. */
  appliedWaitSeconds?: number;
  /**
   * Set on a replay of an answer larger than the largest stored one (maxStoredBodyBytes): it was
   * kept without its body (`bodyText` is "", `body` undefined); this is the body's size in bytes.
   */
  omittedBytes?: number;
}

export async function withIdempotency<T, TTx extends SqlTransaction>(
  engine: IdempotencyEngine<TTx>,
  call: IdempotentCall,
  handler: (tx: TTx) => Promise<T>,
): Promise<IdempotentResult<T>> {
  const parsed = parseIdempotencyKey(call.key);
  if (!parsed.ok) throw new IdempotencyError(parsed.reason, parsed.message);
  const outcome = await engine.execute(
    {
      scope: call.scope,
      key: parsed.key,
      procedure: call.operation,
      input: call.request,
      waitMs: call.waitSeconds === undefined ? undefined : call.waitSeconds * 1000,
    },
    async (tx) => asOutcome(() => handler(tx)),
  );
  const { response } = outcome;
  return {
    ok: outcome.kind === "success",
    status: response.status,
    bodyText: response.body,
    body: response.omittedBytes === undefined ? (JSON.parse(response.body) as T) : undefined,
    replayed: outcome.replayed,
    expiresAt: outcome.expiresAt,
    appliedWaitSeconds: outcome.appliedWaitSeconds,
    ...(response.omittedBytes === undefined ? {} : { omittedBytes: response.omittedBytes }),
  };
}

/** The handler's answer as the engine stores it: its value, or its DeterministicError. */
async function asOutcome(run: () => Promise<unknown>): Promise<HandlerOutcome> {
  try {
    return jsonOutcome("success", 200, await run());
  } catch (error) {
    if (!(error instanceof DeterministicError)) throw error;
    return jsonOutcome("deterministic", error.status, error.body);
  }
}
