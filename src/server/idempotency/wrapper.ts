// The plain entry point, for callers that are not tRPC (the payment webhook, queue consumers,
// workers): the same protocol and guarantees as the middleware.
import { KeyInvalidError, KeyMissingError } from "./errors";
import { parseIdempotencyKey } from "./key";
import { executeIdempotently, type EngineDeps, type HandlerOutcome } from "./protocol";
import type { Tx } from "./store";

/**
 * Throw this from a handler for a deterministic failure: the business transaction rolls back, the
 * key stores `status` and `body`, and every retry gets them back. Any other error is transient:
 * the key is released and the retry runs anew.
 */
export class DeterministicError extends Error {
  constructor(readonly status: number, readonly body: unknown, message = `deterministic failure (${status})`) {
    super(message);
    this.name = "DeterministicError";
  }
}

export interface IdempotentCall {
  scope: string;
  /** The idempotency key, as received (bare or RFC 8941 quoted). */
  key: string;
  /** A stable name for the operation: part of the fingerprint. */
  operation: string;
  /** What the caller asked for: a retry with another request under the same key is refused (422). */
  request: unknown;
}

export type IdempotentResult<T> =
  | { ok: true; status: number; body: T; replayed: boolean; expiresAt: Date }
  | { ok: false; status: number; body: unknown; replayed: boolean; expiresAt: Date };

export async function withIdempotency<T>(
  deps: EngineDeps,
  call: IdempotentCall,
  handler: (tx: Tx) => Promise<T>,
): Promise<IdempotentResult<T>> {
  const parsed = parseIdempotencyKey(call.key);
  if (!parsed.ok) throw parsed.reason === "idempotency_key_missing" ? new KeyMissingError(parsed.message) : new KeyInvalidError(parsed.message);
  const outcome = await executeIdempotently(
    deps,
    { scope: call.scope, key: parsed.key, procedure: call.operation, input: call.request },
    async (tx): Promise<HandlerOutcome> => {
      try {
        const body = await handler(tx);
        return { kind: "success", status: 200, body: body === undefined ? null : JSON.parse(JSON.stringify(body)) };
      } catch (error) {
        if (error instanceof DeterministicError) return { kind: "deterministic", status: error.status, body: error.body };
        throw error;
      }
    },
  );
  const common = { status: outcome.status, replayed: outcome.replayed, expiresAt: outcome.expiresAt };
  return outcome.kind === "success" ? { ok: true, body: outcome.body as T, ...common } : { ok: false, body: outcome.body, ...common };
}
