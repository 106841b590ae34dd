// The largest stored answer (maxStoredBodyBytes): above it the outcome is kept without its body, so
// a key's row, a replay-cache entry and a replay stay bounded whatever a handler returns.
import { IdempotencyError } from "../errors.js";
import { Reason } from "../reasons.js";
import type { StoredResponse } from "../store/types.js";

/** The body's size in bytes (UTF-8 for text). */
export function bodySize(response: StoredResponse): number {
  return response.bytes?.byteLength ?? Buffer.byteLength(response.body);
}

/** The answer as it is stored: itself, or without its body when that is larger than `maxBytes`. */
export function forStorage(response: StoredResponse, maxBytes: number): StoredResponse {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most answers are decided without counting.
  if (!response.bytes && response.body.length * 3 <= maxBytes) return response;
  const size = bodySize(response);
  if (size <= maxBytes) return response;
  const { bytes: _bytes, ...rest } = response;
  return { ...rest, body: "", omittedBytes: size };
}

/** A replay of an answer stored without its body. */
export function bodyOmitted(size: number): IdempotencyError {
  return new IdempotencyError(
    Reason.REPLAY_BODY_OMITTED,
    `This key's request ran once; its answer (${size} bytes) was larger than the largest stored answer, so a replay cannot give its body`,
  );
}
