// What a mutation's HTTP request says: its key, and that it would rather wait for a duplicate's
// answer than get a 409. Given to tRPC's `httpLink` as its `headers` option.
import type { Operation } from "@trpc/client";
import { Header } from "../constants.js";
import type { IntentKeys } from "./intent-keys.js";
import { PREFER_WAIT_SECONDS, type RetryReason } from "./retry-policy.js";

export interface IdempotencyInfo {
  /** The Idempotency-Key the answer belongs to. */
  key: string;
  /** The server answered from the key's stored first answer (`Idempotent-Replayed: true`). */
  replayed: boolean;
  /**
   * Until when the server keeps the key and its answer (`Idempotency-Key-Expires`), when it said.
   */
  expiresAt?: Date;
  /** Requests sent for this call, retries included. */
  attempts: number;
}

export type IdempotencyEvent =
  | { type: "attempt"; key: string; attempt: number }
  | {
      type: "retry";
      key: string;
      attempt: number;
      delayMs: number;
      reason: RetryReason;
      status?: number;
    }
  | ({ type: "answer"; ok: boolean; status?: number; reason?: string } & IdempotencyInfo);

/**
 * What a mutation's tRPC `context` may carry for the link (`client.x.mutate(input, { context })`,
 * or `{ trpc: { context } }` in a React mutation's options, which `useIdempotency` fills).
 */
export type IdempotencyContext = {
  /** The key to send. Without it (and without an intent) the link makes one per call. */
  idempotencyKey?: string;
  /**
   * One key per intent (see intent-keys.ts): the link asks it for the key and tells it when the
   * answer is final.
   */
  idempotencyIntent?: IntentKeys;
  /** Told about every attempt, every retry and the final answer (for a progress display). */
  onIdempotencyEvent?: (event: IdempotencyEvent) => void;
};

/**
 * Operations whose request got the headers below: the link can tell when a mutation bypassed them.
 */
export const opsWithHeaders = new WeakSet<object>();

/** A mutation was wired through a batching link: a mistake in the code, never worth a retry. */
export class BatchedMutationError extends Error {
  override name = "BatchedMutationError";
}

export const BATCHED_MUTATION_MESSAGE =
  "@once/idempotency: a mutation was sent through a batching link. One Idempotency-Key cannot cover a batch: " +
  "send mutations through `httpLink({ headers: idempotencyHeaders })` in a `splitLink` (queries may stay batched).";

/**
 * The `headers` option of the `httpLink` that sends mutations: `Idempotency-Key` and
 * `Prefer: wait=10`. Queries get nothing. Handed a batch (`{ opList }`) that holds a mutation it
 * throws: the key would be refused (`400 idempotency_batch_not_allowed`) and the replay and expiry
 * headers lost.
 */
export function idempotencyHeaders(
  opts:
    { op: Pick<Operation, "type" | "context"> } | { opList: readonly Pick<Operation, "type">[] },
): Record<string, string> {
  if ("opList" in opts) {
    if (opts.opList.some((op) => op.type === "mutation"))
      throw new BatchedMutationError(BATCHED_MUTATION_MESSAGE);
    return {};
  }
  const { op } = opts;
  if (op.type !== "mutation") return {};
  opsWithHeaders.add(op);
  const key = (op.context as IdempotencyContext).idempotencyKey;
  return { ...(key ? { [Header.KEY]: key } : {}), [Header.PREFER]: `wait=${PREFER_WAIT_SECONDS}` };
}
