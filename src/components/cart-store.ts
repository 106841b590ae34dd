"use client";
// The cart lives in localStorage, one per account (`once.cart.<owner>`, "guest" when nobody is
// signed in), shared by every tab (a `storage` event tells the others). Each edit gives it a new
// `revision`, the checkout's idempotency key (src/trpc/checkout-intent.ts): the same cart is the
// same intent in every tab, and any change is a new one. The owner comes from the session (Nav sets
// it once `session.me` answers) and is remembered, so a page load shows that account's cart at
// once, even while the shop cannot reach its database.
import { useSyncExternalStore } from "react";
import { fingerprintOf } from "@once/idempotency/client";
import type { CartLine } from "@/trpc/checkout-intent";
import { mergeLines } from "@/shared/order-lines";

export interface Cart {
  revision: string;
  lines: CartLine[];
}

const CART_PREFIX = "once.cart.";
const OWNER_KEY = "once.cart-owner";
export const GUEST = "guest";
/** The API takes 1–99 of a product per line and at most 20 lines (server/checkout/input.ts). */
export const MAX_QUANTITY = 99;
const MAX_LINES = 20;

const EMPTY: Cart = { revision: "empty", lines: [] };
const listeners = new Set<() => void>();
let owner: string | null = null;
/** The last cart read and the stored text it came from: the same text gives the same object. */
let cached: { key: string; raw: string | null; cart: Cart } = { key: "", raw: null, cart: EMPTY };

/** The owner id of an account: a hash of its email, so the storage keys carry no address. */
export function accountOwner(email: string): string {
  return `acct-${fingerprintOf(email.trim().toLowerCase())}`;
}

/** Uses localStorage; where it is disabled (or full) the cart is not kept, and nothing breaks. */
function stored<T>(use: (storage: Storage) => T): T | undefined {
  try {
    return use(window.localStorage);
  } catch {
    return undefined;
  }
}

function currentOwner(): string {
  owner ??= stored((s) => s.getItem(OWNER_KEY)) ?? GUEST;
  return owner;
}

function parse(raw: string | null): Cart {
  if (!raw) return EMPTY;
  try {
    const value = JSON.parse(raw) as Partial<Cart>;
    if (typeof value.revision !== "string" || !Array.isArray(value.lines)) return EMPTY;
    const lines = value.lines.filter(
      (l): l is CartLine =>
        typeof l?.productId === "string" && Number.isInteger(l.quantity) && l.quantity > 0,
    );
    return { revision: value.revision, lines };
  } catch {
    return EMPTY;
  }
}

function readOf(who: string): Cart {
  const key = CART_PREFIX + who;
  const raw = stored((s) => s.getItem(key)) ?? null;
  if (raw !== cached.raw || key !== cached.key) cached = { key, raw, cart: parse(raw) };
  return cached.cart;
}

function writeOf(who: string, lines: CartLine[]) {
  const canonical = mergeLines(lines);
  const cart = JSON.stringify({ revision: crypto.randomUUID(), lines: canonical });
  stored((s) =>
    canonical.length === 0 ? s.removeItem(CART_PREFIX + who) : s.setItem(CART_PREFIX + who, cart),
  );
}

const read = () => readOf(currentOwner());
const emit = () => listeners.forEach((listener) => listener());

function write(lines: CartLine[]) {
  writeOf(currentOwner(), lines);
  emit();
}

/** Lines of both carts, quantities added up (capped), at most MAX_LINES products. */
function merge(into: CartLine[], from: CartLine[]): CartLine[] {
  const merged = new Map(into.map((l) => [l.productId, l.quantity]));
  for (const line of from) {
    if (!merged.has(line.productId) && merged.size >= MAX_LINES) continue;
    merged.set(
      line.productId,
      Math.min(MAX_QUANTITY, (merged.get(line.productId) ?? 0) + line.quantity),
    );
  }
  return [...merged].map(([productId, quantity]) => ({ productId, quantity }));
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === null || event.key.startsWith(CART_PREFIX)) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

export const cartStore = {
  read,
  /** Whose cart is shown: an account owner id (accountOwner) or GUEST. */
  owner: currentOwner,
  /**
   * The session says who is signed in. A guest who signs in brings the guest cart along: it is
   * added to the account's cart and the guest cart is emptied (it was theirs a moment ago).
   */
  setOwner(next: string) {
    const previous = currentOwner();
    if (next === previous) return;
    const guest = readOf(GUEST).lines;
    if (next !== GUEST && guest.length > 0) {
      writeOf(next, merge(readOf(next).lines, guest));
      writeOf(GUEST, []);
    }
    owner = next;
    // Where storage refuses, the next page load shows the guest cart until the session answers.
    stored((s) => s.setItem(OWNER_KEY, next));
    emit();
  },
  /** One more of a product (not past MAX_QUANTITY); a product past MAX_LINES is not added. */
  add(productId: string) {
    const lines = read().lines;
    if (lines.length >= MAX_LINES && !lines.some((l) => l.productId === productId)) return;
    write(merge(lines, [{ productId, quantity: 1 }]));
  },
  setQuantity(productId: string, quantity: number) {
    const q = Math.max(0, Math.min(MAX_QUANTITY, Math.floor(quantity)));
    write(read().lines.map((l) => (l.productId === productId ? { ...l, quantity: q } : l)));
  },
  remove(productId: string) {
    write(read().lines.filter((l) => l.productId !== productId));
  },
  clear() {
    write([]);
  },
  /** Same contents, new revision: the next checkout of this cart is a new intent. */
  touch() {
    const lines = read().lines;
    if (lines.length > 0) write(lines);
  },
};

/** The shown cart, kept in sync with localStorage and other tabs. Empty during server rendering. */
export function useCart(): Cart {
  return useSyncExternalStore(subscribe, read, () => EMPTY);
}

export function cartCount(cart: Cart): number {
  return cart.lines.reduce((sum, l) => sum + l.quantity, 0);
}
