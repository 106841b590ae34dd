// Prefer: wait (RFC 7240): a request whose key is held by another request in flight sleeps until
// that request settles (woken through LISTEN, wait/waiters.ts) or until its wait runs out, and
// then looks at the key again: a replay, the key itself if it was released, or 409.
import type { EngineConfig } from "../config.js";
import { KeyStatus } from "../constants.js";
import type { KeyRecord, ReserveRequest } from "../store/types.js";
import type { EngineDeps } from "./deps.js";

/** A lease about to end by the database's clock may not have ended by ours: never spin on it. */
const MIN_SLEEP_MS = 5;

export interface WaitBudget {
  /** This process's clock when the wait ends. */
  deadline: number;
  /** The bound applied, whole seconds rounded up (`Preference-Applied: wait=…`). */
  seconds: number;
  /** Set once the engine has waited: the answer then carries Preference-Applied. */
  applied: boolean;
  /** How the sleep runs (IdempotentRequest.whileWaiting); by default, as it is. */
  aside: <T>(sleep: () => Promise<T>) => Promise<T>;
}

const asItIs = <T>(sleep: () => Promise<T>) => sleep();

/** The wait a request may have: what it asked for, capped by the configuration; none if 0. */
export function waitBudget(
  requestedMs: number | undefined,
  config: EngineConfig,
  aside: WaitBudget["aside"] = asItIs,
): WaitBudget | undefined {
  const ms = Math.min(requestedMs ?? 0, config.maxWaitMs);
  if (!(ms > 0)) return undefined;
  return { deadline: Date.now() + ms, seconds: Math.ceil(ms / 1000), applied: false, aside };
}

/**
 * Sleeps until `held` settles, its lease ends, or the budget runs out. Returns false at once when
 * it cannot wait (budget spent, or no LISTEN connection to be woken by: then the caller answers
 * 409 as without the preference); true when the caller should look at the key again.
 */
export async function waitForSettle(
  deps: EngineDeps,
  r: ReserveRequest,
  held: KeyRecord,
  budget: WaitBudget,
): Promise<boolean> {
  const leftMs = budget.deadline - Date.now();
  if (leftMs <= 0 || !deps.waiters.listening) return false;
  // Past the lease end the key can be taken over, so there is no use sleeping beyond it.
  const leaseLeftMs = (held.leaseExpiresAt?.getTime() ?? 0) - held.dbNow.getTime();
  const waiter = deps.waiters.register(r.scope, r.key);
  budget.applied = true;
  try {
    // Registered first, then marked: a settle that landed before the registration shows here (no
    // row comes back), and one after the mark announces itself (MARK_AWAITED).
    const now = await deps.store.markAwaited(held);
    if (!stillHeld(now, held)) return true;
    await budget.aside(() => waiter.until(Math.min(leftMs, Math.max(leaseLeftMs, MIN_SLEEP_MS))));
    return true;
  } finally {
    waiter.cancel();
  }
}

function stillHeld(now: KeyRecord | null, held: KeyRecord): boolean {
  return (
    now?.id === held.id && now.status === KeyStatus.PROCESSING && now.leaseToken === held.leaseToken
  );
}
