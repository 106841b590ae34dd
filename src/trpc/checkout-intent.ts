// A checkout *intent* is one cart snapshot that a person submitted. Its idempotency key must be the
// same for every way that snapshot can be sent again, and different as soon as the cart changes:
//
//   - a double-click, or a retry after a lost response: same tab, same cart → same key;
//   - a reload right after submitting: the pending intent is kept in sessionStorage, so the page
//     finds it again, sends the same key and shows the first answer;
//   - two tabs submitting the same cart: sessionStorage is per tab, so the key cannot live only
//     there. The cart (localStorage, shared by the tabs) carries a revision id that changes on
//     every edit; the key is derived from it, so both tabs send the same key without having to
//     coordinate at the moment of the click;
//   - a changed cart: a new revision, a new cart hash, a new key;
//   - another account in the same tab (sign out, sign in as someone else): the pending intent is
//     kept per account (`intentStorageFor`), so one account never resumes another's checkout.
//
// The pending intent is cleared once a final answer has been shown and the cart emptied. The
// storing and matching of the pending intent is the package's (createIntentKeys); what is
// shop-specific is here: the cart as the input, the revision as the key, the per-account slot.
import {
  createIntentKeys,
  type KeyValueStorage,
  type PendingIntent,
} from "@once/idempotency/client";

export interface CartLine {
  productId: string;
  quantity: number;
}

/** The cart as the checkout submits it: lines sorted by product, no empty lines. */
export function canonicalLines(lines: readonly CartLine[]): CartLine[] {
  const merged = new Map<string, number>();
  for (const line of lines) {
    if (line.quantity > 0)
      merged.set(line.productId, (merged.get(line.productId) ?? 0) + line.quantity);
  }
  return [...merged.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([productId, quantity]) => ({ productId, quantity }));
}

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

export function readIntent(
  storage: KeyValueStorage,
  nowMs: number = Date.now(),
): PendingIntent | null {
  return checkoutIntents(storage, nowMs).pending();
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
  return { items: canonicalLines(lines) };
}
