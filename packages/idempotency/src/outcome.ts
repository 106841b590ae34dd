// What a protocol run answers: the handler's outcome, and the answer given to the caller (first or
// replayed). Below the protocol, so the replay cache and the transaction can name them without
// importing the protocol that produces them.
import type { StoredResponse } from "./store/types.js";

/**
 * What the handler produced. `success` commits with the key; `deterministic` is a 4xx the handler
 * chose (out of stock): the business transaction rolls back, the key stores it and retries replay
 * it. Anything the handler throws is transient: the key is released so a retry runs anew.
 */
export type HandlerOutcome = { kind: "success" | "deterministic"; response: StoredResponse };

/** `value` as a JSON answer of `status` (undefined as `null`). */
export function jsonOutcome(
  kind: HandlerOutcome["kind"],
  status: number,
  value: unknown,
): HandlerOutcome {
  const body = JSON.stringify(value ?? null);
  return { kind, response: { status, body, contentType: "application/json" } };
}

export interface Outcome {
  kind: HandlerOutcome["kind"];
  response: StoredResponse;
  replayed: boolean;
  /** When the key's record expires (Idempotency-Key-Expires). */
  expiresAt: Date;
  /** Set when the request waited for its key first (Prefer: wait): `Preference-Applied`. */
  appliedWaitSeconds?: number;
}
