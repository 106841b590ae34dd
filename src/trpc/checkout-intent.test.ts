// The checkout's intents (src/trpc/checkout-intent.ts): the shop's rules on top of the package's
// intent tracker (@once/idempotency/client): the cart is the input, its revision the new key, and
// each account of a tab keeps its own pending intent.
import { describe, expect, it } from "vitest";
import {
  beginIntent,
  clearIntent,
  INTENT_MAX_AGE_MS,
  INTENT_STORAGE_KEY,
  intentStorageFor,
  pendingIntentFor,
  placeOrderInput,
} from "./checkout-intent";
import { mergeLines } from "@/shared/order-lines";

/** A tab's sessionStorage, in memory. */
function tabStorage(map = new Map<string, string>()) {
  return {
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
}

describe("checkout intents", () => {
  const cartA = [
    { productId: "p2", quantity: 1 },
    { productId: "p1", quantity: 2 },
  ];
  const cartB = [
    { productId: "p1", quantity: 3 },
    { productId: "p2", quantity: 1 },
  ];

  it("canonicalises the cart so the same snapshot always sends the same input", () => {
    expect(
      mergeLines([
        { productId: "b", quantity: 1 },
        { productId: "a", quantity: 2 },
        { productId: "a", quantity: 1 },
        { productId: "c", quantity: 0 },
      ]),
    ).toEqual([
      { productId: "a", quantity: 3 },
      { productId: "b", quantity: 1 },
    ]);
    expect(beginIntent(tabStorage(), cartA, "k", 1).fingerprint).toBe(
      beginIntent(tabStorage(), [...cartA].reverse(), "k", 1).fingerprint,
    );
    expect(beginIntent(tabStorage(), cartA, "k", 1).fingerprint).not.toBe(
      beginIntent(tabStorage(), cartB, "k", 1).fingerprint,
    );
    expect(placeOrderInput(cartA)).toEqual({
      items: [
        { productId: "p1", quantity: 2 },
        { productId: "p2", quantity: 1 },
      ],
    });
  });

  it("reuses the pending key for the same cart (double-click, retry, reload)", () => {
    const storage = tabStorage();
    const first = beginIntent(storage, cartA, "key-1", 1_000);
    const again = beginIntent(storage, [...cartA].reverse(), "key-2", 2_000);
    expect(again).toEqual(first);
    expect(again.key).toBe("key-1");
    expect(pendingIntentFor(storage, cartA, 3_000)?.key).toBe("key-1");
  });

  it("makes a new key for a changed cart", () => {
    const storage = tabStorage();
    beginIntent(storage, cartA, "key-1", 1_000);
    expect(beginIntent(storage, cartB, "key-2", 2_000).key).toBe("key-2");
    expect(pendingIntentFor(storage, cartA, 3_000)).toBeNull();
  });

  it("forgets the intent once cleared, or when older than the server keeps keys", () => {
    const storage = tabStorage();
    beginIntent(storage, cartA, "key-1", 1_000);
    expect(pendingIntentFor(storage, cartA, 1_000 + INTENT_MAX_AGE_MS + 1)).toBeNull();
    clearIntent(storage);
    expect(pendingIntentFor(storage, cartA, 2_000)).toBeNull();
    expect(beginIntent(storage, cartA, "key-3", 3_000).key).toBe("key-3");
  });

  it("keeps each account's pending intent apart in a shared tab", () => {
    const tab = tabStorage();
    const acme = intentStorageFor(tab, "acct-acme");
    const globex = intentStorageFor(tab, "acct-globex");
    beginIntent(acme, cartA, "acme-key", 1_000);
    // globex signs in on the same tab with the very same cart: not acme's checkout to resume.
    expect(pendingIntentFor(globex, cartA, 2_000)).toBeNull();
    expect(beginIntent(globex, cartA, "globex-key", 2_000).key).toBe("globex-key");
    clearIntent(globex);
    // acme comes back: its own pending checkout is still there, with its key.
    expect(pendingIntentFor(acme, cartA, 3_000)?.key).toBe("acme-key");
  });

  it("ignores garbage in storage", () => {
    const storage = tabStorage();
    storage.setItem(INTENT_STORAGE_KEY, "{not json");
    expect(pendingIntentFor(storage, cartA)).toBeNull();
    storage.setItem(INTENT_STORAGE_KEY, JSON.stringify({ key: 1 }));
    expect(pendingIntentFor(storage, cartA)).toBeNull();
  });
});
