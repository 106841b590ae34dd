// The business transaction: the handler's writes and the key's fenced completion commit together,
// or not at all. How it ended comes back as a value, for execute.ts's one switch.
import { KeyStatus } from "../constants.js";
import type { KeyRecord, SqlTransaction, StoredResponse } from "../store/types.js";
import type { EngineDeps } from "./deps.js";
import type { HandlerOutcome } from "../outcome.js";
import { forStorage } from "./stored-size.js";

/** How the business transaction ended. `stored` is `response` as stored (forStorage). */
export type TransactionResult =
  | { kind: "completed"; response: StoredResponse; stored: StoredResponse }
  | { kind: "deterministic"; response: StoredResponse }
  | { kind: "fenced" }
  | { kind: "handler_failed"; error: unknown }
  | { kind: "store_failed"; error: unknown };

/** Thrown inside the transaction callback to roll it back, carrying how it ended. */
class Rollback {
  constructor(readonly result: TransactionResult) {}
}

/**
 * The handler's writes and the key's completion commit together, or not at all. With
 * `transaction: false`, the two-phase path for a handler with no effect in this database (it only
 * calls out): no transaction is held while it runs (a slow call would hold a pooled connection);
 * its answer is stored after it, fenced like a completion, and it ends in the same results.
 */
export async function runTransaction<TTx extends SqlTransaction>(
  deps: EngineDeps<TTx>,
  record: KeyRecord,
  handler: (tx?: TTx) => Promise<HandlerOutcome>,
  transaction = true,
): Promise<TransactionResult> {
  const body = async (tx?: TTx): Promise<TransactionResult> => {
    const outcome = await handler(tx).catch((error: unknown) => {
      throw new Rollback({ kind: "handler_failed", error });
    });
    if (outcome.kind === "deterministic")
      throw new Rollback({ kind: "deterministic", response: outcome.response });
    // Fencing: if a retry took our lease over, no row matches and we roll back.
    const stored = forStorage(outcome.response, deps.config.maxStoredBodyBytes);
    if (!(await deps.store.finish(record, KeyStatus.COMPLETED, stored, tx)))
      throw new Rollback({ kind: "fenced" });
    return { kind: "completed", response: outcome.response, stored };
  };
  try {
    const timeoutMs = deps.config.transactionTimeoutMs;
    return await (transaction ? deps.store.transaction(body, { timeoutMs }) : body());
  } catch (error) {
    return error instanceof Rollback ? error.result : { kind: "store_failed", error };
  }
}
