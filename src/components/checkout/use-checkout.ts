"use client";
// The checkout's behaviour: the cart, what the shop knows about its products and the visitor, and
// the one intent being placed. One submitted cart snapshot is one intent with one idempotency key
// (src/trpc/checkout-intent.ts); every way the same snapshot gets sent again (double click, the
// link's retries, a reload, another tab) sends that key, so the shop places one order.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import {
  clearIntent,
  intentStorageFor,
  pendingIntentFor,
  type CartLine,
} from "@/trpc/checkout-intent";
import { idempotencyInfoOfError } from "@once/idempotency/client";
import { networkTrouble } from "@/trpc/network-trouble";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { isStoreUnreachable } from "@/trpc/store-status";
import { cartStore, useCart } from "../cart-store";
import { describeCheckoutProblem } from "../checkout-problems";
import { shortId } from "../format";
import { sendOrder, type OrderAnswer } from "./send-order";

export type Phase =
  | { kind: "idle" }
  | { kind: "placed"; orderId: string; replayed: boolean }
  | { kind: "submitting"; message: string }
  | { kind: "failed"; problem: ReturnType<typeof describeCheckoutProblem> };

/** The pending intent lives in this tab, per account: another account never resumes it. */
function intentStorage() {
  return intentStorageFor(window.sessionStorage, cartStore.owner());
}

/** Where the confirmation goes: the order page, told whether this answer was a replay. */
function orderPageUrl(answers: OrderAnswer[]): string {
  const allReplayed = answers.every((a) => a.replayed);
  const replays = answers.filter((a) => a.replayed).length;
  const params = new URLSearchParams({ placed: allReplayed ? "replayed" : "new" });
  if (!allReplayed && replays > 0) params.set("replays", String(replays));
  return `/orders/${answers[0]!.order.id}?${params.toString()}`;
}

/** What the page does with the intent's final answer: an order, or a problem. */
function useSettle(setPhase: (phase: Phase) => void) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();

  const placed = useCallback(
    (answers: OrderAnswer[]) => {
      // A final answer: the intent is done. Empty the cart, forget the intent, show the order.
      cartStore.clear();
      clearIntent(intentStorage());
      setPhase({
        kind: "placed",
        orderId: answers[0]!.order.id,
        replayed: answers.every((a) => a.replayed),
      });
      void queryClient.invalidateQueries({ queryKey: trpc.orders.pathKey() });
      void queryClient.invalidateQueries({ queryKey: trpc.catalog.pathKey() });
      router.push(orderPageUrl(answers));
    },
    [queryClient, router, trpc, setPhase],
  );

  const failed = useCallback(
    (error: unknown) => {
      const problem = describeCheckoutProblem(error, idempotencyInfoOfError(error));
      if (!problem.keepIntent) {
        // The shop gave its final word on this cart (e.g. out of stock): the next try is a new
        // intent, with a new key, whether or not the person changes the cart.
        clearIntent(intentStorage());
        cartStore.touch();
      }
      setPhase({ kind: "failed", problem });
    },
    [setPhase],
  );

  return { placed, failed };
}

/**
 * Sends a cart snapshot as one intent and settles the page on its final answer. A second call
 * while one is under way joins it (same intent, nothing new sent).
 */
function usePlaceOrder(setPhase: (phase: Phase) => void) {
  const client = useTRPCClient();
  const { placed, failed } = useSettle(setPhase);
  const inFlight = useRef<Promise<void> | null>(null);

  return useCallback(
    (snapshot: { revision: string; lines: CartLine[] }): Promise<void> => {
      if (inFlight.current) {
        networkTrouble.note(
          "Another click on Place order: already placing this order, nothing new sent.",
        );
        return inFlight.current;
      }
      setPhase({ kind: "submitting", message: "Placing your order…" });
      const promise = sendOrder(client, snapshot, intentStorage(), (message) =>
        setPhase({ kind: "submitting", message }),
      )
        .then((outcome) => (outcome.ok ? placed(outcome.answers) : failed(outcome.error)))
        .catch((error: unknown) =>
          setPhase({ kind: "failed", problem: describeCheckoutProblem(error) }),
        )
        .finally(() => {
          inFlight.current = null;
        });
      inFlight.current = promise;
      return promise;
    },
    [client, placed, failed, setPhase],
  );
}

export function useCheckout() {
  const trpc = useTRPC();
  const cart = useCart();
  const products = useQuery(trpc.catalog.list.queryOptions());
  const me = useQuery(trpc.session.me.queryOptions());
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const [resumed, setResumed] = useState(false);
  const resumeChecked = useRef(false);
  const placeOrder = usePlaceOrder(setPhase);

  // A reload right after submitting: the pending intent for this very cart is still in
  // sessionStorage. Ask for its answer with the same key (a replay, or a wait while it runs).
  useEffect(() => {
    if (resumeChecked.current || cart.lines.length === 0) return;
    resumeChecked.current = true;
    const pending = pendingIntentFor(intentStorage(), cart.lines);
    if (!pending) return;
    setResumed(true);
    networkTrouble.note(
      `Found the order sent before the page reloaded (key ${shortId(pending.key)}): asking for its answer.`,
    );
    void placeOrder(cart);
  }, [cart, placeOrder]);

  return {
    cart,
    phase,
    resumed,
    submit: () => {
      if (cart.lines.length > 0) void placeOrder(cartStore.read());
    },
    products: {
      byId: new Map((products.data ?? []).map((p) => [p.id, p])),
      loaded: products.data !== undefined,
      currency: products.data?.[0]?.currency ?? "EUR",
    },
    /** undefined while the shop does not know (still asking, or it cannot reach its database). */
    signedIn: me.data === undefined ? undefined : me.data?.tenantId != null,
    storeUnreachable: isStoreUnreachable(products.error) || isStoreUnreachable(me.error),
  };
}
