// A checkout *intent* is one cart snapshot a person submitted. Its idempotency key is the same for
// every way that snapshot can be sent again, and new as soon as the cart changes:
//   - a double-click, or a retry after a lost response: same tab, same cart, same key;
//   - a reload right after submitting: the pending intent waits in sessionStorage;
//   - two tabs submitting one cart: the key is the cart's revision id (localStorage, shared by the
//     tabs, new on every edit), so both send the same key without coordinating;
//   - another account in the same tab: the pending intent is kept per account.
// The package tracks the pending intent (createIntentKeys); the shop's part is here: the cart as
// the input, the revision as the key, the per-account slot. Cleared once the answer is shown.
import {
  createIntentKeys,
  type KeyValueStorage,
  type PendingIntent,
} from "@once/idempotency/client";
import { mergeLines, type OrderLine } from "@/shared/order-lines";

export type CartLine = OrderLine;

export const INTENT_STORAGE_KEY = "once.checkout.intent";
/**
 * The server forgets a key after its retention window (24 h by default); an intent older than that
 * cannot be answered from the key any more, so it is not worth resuming.
 */
export const INTENT_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * `storage` as one account sees it: every key suffixed with the account's owner id, so each
 * account of a shared tab keeps its own pending intent.
 */
export function intentStorageFor(storage: KeyValueStorage, owner: string): KeyValueStorage {
  const scoped = (key: string) => `${key}:${owner}`;
  return {
    getItem: (key) => storage.getItem(scoped(key)),
    setItem: (key, value) => storage.setItem(scoped(key), value),
    removeItem: (key) => storage.removeItem(scoped(key)),
  };
}

/** The package's one-pending-intent tracker, kept in `storage` (the tab's, per account). */
function checkoutIntents(storage: KeyValueStorage, nowMs: number) {
  return createIntentKeys({
    storage,
    storageKey: INTENT_STORAGE_KEY,
    maxAgeMs: INTENT_MAX_AGE_MS,
    now: () => nowMs,
  });
}

/**
 * The intent for submitting `lines` now: the pending one when it is for the same cart, else a new
 * one keyed `keyForNewIntent` (the cart's revision id). Persisted before anything is sent, so a
 * reload in the middle of the request finds it.
 */
export function beginIntent(
  storage: KeyValueStorage,
  lines: readonly CartLine[],
  keyForNewIntent: string,
  nowMs: number = Date.now(),
): PendingIntent {
  return checkoutIntents(storage, nowMs).begin(placeOrderInput(lines), keyForNewIntent);
}

/** The pending intent when it belongs to this cart (a reload after submitting it). */
export function pendingIntentFor(
  storage: KeyValueStorage,
  lines: readonly CartLine[],
  nowMs: number = Date.now(),
): PendingIntent | null {
  return lines.length > 0
    ? checkoutIntents(storage, nowMs).pendingFor(placeOrderInput(lines))
    : null;
}

export function clearIntent(storage: KeyValueStorage): void {
  checkoutIntents(storage, Date.now()).clear();
}

/** The checkout's input for this cart: the canonical lines, so retries fingerprint identically. */
export function placeOrderInput(lines: readonly CartLine[]): { items: CartLine[] } {
  return { items: mergeLines(lines) };
}
