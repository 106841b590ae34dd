"use client";
// The cart lives in localStorage, so every tab of the shop sees the same cart (a `storage` event
// tells the other tabs). Each edit gives the cart a new `revision`: the checkout derives its
// idempotency key from it (src/trpc/checkout-intent.ts), so the same cart is the same intent in
// every tab, and any change is a new intent.
import { useSyncExternalStore } from "react";
import { canonicalLines, type CartLine } from "@/trpc/checkout-intent";

export interface Cart {
  revision: string;
  lines: CartLine[];
}

const STORAGE_KEY = "once.cart";
/** The API accepts 1–99 of a product per line and at most 20 lines (DESIGN.md). */
export const MAX_QUANTITY = 99;
export const MAX_LINES = 20;

const EMPTY: Cart = { revision: "empty", lines: [] };
const listeners = new Set<() => void>();
let cachedRaw: string | null | undefined;
let cached: Cart = EMPTY;

function parse(raw: string | null): Cart {
  if (!raw) return EMPTY;
  try {
    const value = JSON.parse(raw) as Partial<Cart>;
    if (typeof value.revision !== "string" || !Array.isArray(value.lines)) return EMPTY;
    const lines = value.lines.filter(
      (l): l is CartLine => typeof l?.productId === "string" && Number.isInteger(l.quantity) && l.quantity > 0,
    );
    return { revision: value.revision, lines };
  } catch {
    return EMPTY;
  }
}

function read(): Cart {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(STORAGE_KEY);
  } catch {
    raw = null;
  }
  if (raw !== cachedRaw) {
    cachedRaw = raw;
    cached = parse(raw);
  }
  return cached;
}

function write(lines: CartLine[]) {
  const canonical = canonicalLines(lines);
  try {
    if (canonical.length === 0) window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, JSON.stringify({ revision: crypto.randomUUID(), lines: canonical }));
  } catch {
    // storage disabled: the cart cannot be kept
  }
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY || event.key === null) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

export const cartStore = {
  read,
  add(productId: string, quantity = 1) {
    const lines = read().lines;
    const existing = lines.find((l) => l.productId === productId);
    if (!existing && lines.length >= MAX_LINES) return;
    write(
      existing
        ? lines.map((l) => (l.productId === productId ? { ...l, quantity: Math.min(MAX_QUANTITY, l.quantity + quantity) } : l))
        : [...lines, { productId, quantity }],
    );
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

/** The cart, kept in sync with localStorage and other tabs. Empty during server rendering. */
export function useCart(): Cart {
  return useSyncExternalStore(subscribe, read, () => EMPTY);
}

export function cartCount(cart: Cart): number {
  return cart.lines.reduce((sum, l) => sum + l.quantity, 0);
}
