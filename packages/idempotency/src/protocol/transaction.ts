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

/** The handler's writes and the key's completion commit together, or not at all. */
export async function runTransaction<TTx extends SqlTransaction>(
  deps: EngineDeps<TTx>,
  record: KeyRecord,
  handler: (tx: TTx) => Promise<HandlerOutcome>,
): Promise<TransactionResult> {
  try {
    return await deps.store.transaction(
      async (tx): Promise<TransactionResult> => {
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
      },
      { timeoutMs: deps.config.transactionTimeoutMs },
    );
  } catch (error) {
    return error instanceof Rollback ? error.result : { kind: "store_failed", error };
  }
}

/**
 * The two-phase path, for a handler with no effect in this database (it only calls out): no
 * transaction is held while it runs (a slow call would hold a pooled connection); its answer is
 * stored after it, fenced like a completion. Ends in the same results as runTransaction.
 */
export async function runOutsideTransaction(
  deps: EngineDeps<any>,
  record: KeyRecord,
  handler: () => Promise<HandlerOutcome>,
): Promise<TransactionResult> {
  let outcome: HandlerOutcome;
  try {
    outcome = await handler();
  } catch (error) {
    return { kind: "handler_failed", error };
  }
  if (outcome.kind === "deterministic")
    return { kind: "deterministic", response: outcome.response };
  const stored = forStorage(outcome.response, deps.config.maxStoredBodyBytes);
  try {
    if (!(await deps.store.finish(record, KeyStatus.COMPLETED, stored))) return { kind: "fenced" };
  } catch (error) {
    return { kind: "store_failed", error };
  }
  return { kind: "completed", response: outcome.response, stored };
}
