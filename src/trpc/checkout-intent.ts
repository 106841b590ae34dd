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
// The pending intent is cleared once a final answer has been shown and the cart emptied.

export interface CartLine {
  productId: string;
  quantity: number;
}

/** The cart as the checkout submits it: lines sorted by product, no empty lines. */
export function canonicalLines(lines: readonly CartLine[]): CartLine[] {
  const merged = new Map<string, number>();
  for (const line of lines) {
    if (line.quantity > 0) merged.set(line.productId, (merged.get(line.productId) ?? 0) + line.quantity);
  }
  return [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([productId, quantity]) => ({ productId, quantity }));
}

/**
 * A short, stable hash of the canonical cart (53-bit cyrb53, hex). It only tells two snapshots
 * apart in this browser; it is not a security boundary.
 */
export function cartHash(lines: readonly CartLine[]): string {
  return hashText(JSON.stringify(canonicalLines(lines).map((l) => [l.productId, l.quantity])));
}

/** cyrb53 of any text, 14 hex digits: tells values apart in this browser, nothing more. */
export function hashText(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

export interface PendingIntent {
  cartHash: string;
  key: string;
  /** epoch ms of the first submit */
  submittedAt: number;
}

export const INTENT_STORAGE_KEY = "once.checkout.intent";
/**
 * The server forgets a key after its retention window (24 h by default); an intent older than that
 * cannot be answered from the key any more, so it is not worth resuming.
 */
export const INTENT_MAX_AGE_MS = 24 * 60 * 60 * 1000;

type KeyValueStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

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

export function readIntent(storage: KeyValueStorage, nowMs: number = Date.now()): PendingIntent | null {
  let raw: string | null;
  try {
    raw = storage.getItem(INTENT_STORAGE_KEY);
  } catch {
    return null;
  }
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<PendingIntent>;
    if (typeof parsed.cartHash !== "string" || typeof parsed.key !== "string" || typeof parsed.submittedAt !== "number") {
      return null;
    }
    if (nowMs - parsed.submittedAt > INTENT_MAX_AGE_MS) return null;
    return { cartHash: parsed.cartHash, key: parsed.key, submittedAt: parsed.submittedAt };
  } catch {
    return null;
  }
}

/**
 * The intent for submitting `lines` now: the pending one when it is for the same cart, else a new
 * one keyed `keyForNewIntent` (the cart's revision id). Persists it before anything is sent, so a
 * reload in the middle of the request finds it.
 */
export function beginIntent(storage: KeyValueStorage, lines: readonly CartLine[], keyForNewIntent: string, nowMs: number = Date.now()): PendingIntent {
  const hash = cartHash(lines);
  const pending = readIntent(storage, nowMs);
  if (pending && pending.cartHash === hash) return pending;
  const intent: PendingIntent = { cartHash: hash, key: keyForNewIntent, submittedAt: nowMs };
  try {
    storage.setItem(INTENT_STORAGE_KEY, JSON.stringify(intent));
  } catch {
    // storage full or disabled: the in-memory intent still protects this page's retries
  }
  return intent;
}

/** The pending intent when it belongs to this cart (a reload after submitting it). */
export function pendingIntentFor(storage: KeyValueStorage, lines: readonly CartLine[], nowMs: number = Date.now()): PendingIntent | null {
  const pending = readIntent(storage, nowMs);
  return pending && lines.length > 0 && pending.cartHash === cartHash(lines) ? pending : null;
}

export function clearIntent(storage: KeyValueStorage): void {
  try {
    storage.removeItem(INTENT_STORAGE_KEY);
  } catch {
    // nothing to clear
  }
}

/** The checkout's input for this cart: the canonical lines, so retries fingerprint identically. */
export function placeOrderInput(lines: readonly CartLine[]): { items: CartLine[] } {
  return { items: canonicalLines(lines) };
}
