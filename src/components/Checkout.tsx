"use client";
// The cart and its checkout. One submitted cart snapshot is one intent with one idempotency key
// (src/trpc/checkout-intent.ts); every way the same snapshot gets sent again (double click, the
// link's retries, a reload, another tab) sends that key, so the shop places one order.
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useId, useRef, useState, useSyncExternalStore } from "react";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { beginIntent, clearIntent, pendingIntentFor, placeOrderInput, type CartLine } from "@/trpc/checkout-intent";
import { idempotencyInfoOfError, type IdempotencyEvent } from "@/trpc/idempotency-link";
import { networkTrouble } from "@/trpc/network-trouble";
import { cartStore, MAX_QUANTITY, useCart } from "./cart-store";
import { describeCheckoutProblem, type CheckoutProblem } from "./checkout-problems";
import { formatMoney, shortId } from "./format";

const visuallyHidden = {
  position: "absolute",
  width: 1,
  height: 1,
  overflow: "hidden",
  clip: "rect(0 0 0 0)",
  whiteSpace: "nowrap",
} as const;

type Phase =
  | { kind: "idle" }
  | { kind: "placed"; orderId: string; replayed: boolean }
  | { kind: "submitting"; message: string }
  | { kind: "failed"; problem: ReturnType<typeof describeCheckoutProblem> };

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}

/** What the person sees while the link works, and what the demo log records. */
function describeEvent(event: IdempotencyEvent): string {
  switch (event.type) {
    case "attempt":
      return event.attempt === 1 ? "Placing your order…" : `Asking the shop again with the same key (attempt ${event.attempt})…`;
    case "retry":
      switch (event.reason) {
        case "network":
          return `The connection dropped before the answer arrived. Asking again in ${seconds(event.delayMs)} with the same key: this cannot place a second order.`;
        case "request_in_progress":
          return `The shop is still working on this order (409). Waiting ${seconds(event.delayMs)}, then asking for its answer.`;
        case "store_unavailable":
          return `The order system is unavailable (503). Trying again in ${seconds(event.delayMs)}.`;
      }
      return "Retrying…";
    case "answer":
      if (!event.ok) return `The shop answered ${event.status ?? "nothing"}${event.reason ? ` (${event.reason})` : ""}${event.replayed ? ", replayed" : ""}.`;
      return event.replayed
        ? "The shop answered with the order it had already placed for this key (replayed)."
        : "The shop placed the order.";
  }
}

export function Checkout() {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const router = useRouter();
  const queryClient = useQueryClient();
  const cart = useCart();
  const products = useQuery(trpc.catalog.list.queryOptions());
  const me = useQuery(trpc.session.me.queryOptions());
  const trouble = useSyncExternalStore(networkTrouble.subscribe, networkTrouble.get, networkTrouble.getServerSnapshot);
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const [resumedNotice, setResumedNotice] = useState(false);
  const inFlight = useRef<Promise<void> | null>(null);
  const resumeChecked = useRef(false);
  const problemId = useId();

  const productById = new Map((products.data ?? []).map((p) => [p.id, p]));
  const lines = cart.lines;
  const currency = products.data?.[0]?.currency ?? "EUR";
  const total = lines.reduce((sum, l) => sum + (productById.get(l.productId)?.priceCents ?? 0) * l.quantity, 0);
  const submitting = phase.kind === "submitting";

  const placeOrder = useCallback(
    (snapshot: { revision: string; lines: CartLine[] }): Promise<void> => {
      // A second click before the button disables (or a tap while a retry waits) joins the request
      // already under way: same intent, nothing new sent.
      if (inFlight.current) {
        networkTrouble.note("Another click on Place order: already placing this order, nothing new sent.");
        return inFlight.current;
      }
      const intent = beginIntent(window.sessionStorage, snapshot.lines, snapshot.revision);
      const input = placeOrderInput(snapshot.lines);
      const { doubleSubmitNext, slowMs } = networkTrouble.get();
      if (doubleSubmitNext) networkTrouble.set({ doubleSubmitNext: false });

      const send = (label: string) => {
        let replayed = false;
        const onIdempotencyEvent = (event: IdempotencyEvent) => {
          if (event.type === "answer") replayed = event.replayed;
          const text = describeEvent(event);
          networkTrouble.note(`${label}key ${shortId(event.key)}: ${text}`);
          if (event.type !== "answer") setPhase({ kind: "submitting", message: text });
        };
        return client.checkout.placeOrder
          .mutate(input, { context: { idempotencyKey: intent.key, demoDelayMs: slowMs, onIdempotencyEvent } })
          .then((result) => ({ order: result.order, replayed }));
      };

      const run = async () => {
        setPhase({ kind: "submitting", message: "Placing your order…" });
        if (slowMs > 0) networkTrouble.note(`Asked the server to take ${seconds(slowMs)} over this order.`);
        const requests = doubleSubmitNext ? [send("Request A, "), send("Request B, ")] : [send("")];
        if (doubleSubmitNext) networkTrouble.note("Sent the same order twice at once, with the same key.");
        const settled = await Promise.allSettled(requests);
        const answers = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
        const first = answers[0];
        if (first) {
          // A final answer: the intent is done. Empty the cart, forget the intent, show the order.
          const ids = new Set(answers.map((a) => a.order.id));
          if (ids.size > 1) networkTrouble.note(`Unexpected: ${ids.size} different orders for one key.`);
          const allReplayed = answers.every((a) => a.replayed);
          const replays = answers.filter((a) => a.replayed).length;
          cartStore.clear();
          clearIntent(window.sessionStorage);
          setPhase({ kind: "placed", orderId: first.order.id, replayed: allReplayed });
          void queryClient.invalidateQueries({ queryKey: trpc.orders.pathKey() });
          void queryClient.invalidateQueries({ queryKey: trpc.catalog.pathKey() });
          const params = new URLSearchParams({ placed: allReplayed ? "replayed" : "new" });
          if (!allReplayed && replays > 0) params.set("replays", String(replays));
          router.push(`/orders/${first.order.id}?${params.toString()}`);
          return;
        }
        const error = (settled[0] as PromiseRejectedResult).reason;
        const problem = describeCheckoutProblem(error, idempotencyInfoOfError(error));
        if (!problem.keepIntent) {
          // The shop gave its final word on this cart (e.g. out of stock): the next try is a new
          // intent, with a new key, whether or not the person changes the cart.
          clearIntent(window.sessionStorage);
          cartStore.touch();
        }
        setPhase({ kind: "failed", problem });
      };

      const promise = run()
        .catch((error: unknown) => {
          setPhase({ kind: "failed", problem: describeCheckoutProblem(error) });
        })
        .finally(() => {
          inFlight.current = null;
        });
      inFlight.current = promise;
      return promise;
    },
    [client, router, queryClient, trpc],
  );

  // A reload right after submitting: the pending intent for this very cart is still in
  // sessionStorage. Ask for its answer with the same key (a replay, or a wait while it runs).
  useEffect(() => {
    if (resumeChecked.current || lines.length === 0) return;
    resumeChecked.current = true;
    const pending = pendingIntentFor(window.sessionStorage, lines);
    if (!pending) return;
    setResumedNotice(true);
    networkTrouble.note(`Found the order sent before the page reloaded (key ${shortId(pending.key)}): asking for its answer.`);
    void placeOrder(cart);
  }, [cart, lines, placeOrder]);

  const onSubmit = () => {
    if (lines.length === 0) return;
    void placeOrder(cartStore.read());
  };

  if (phase.kind === "placed") {
    return (
      <>
        <h1>Your cart</h1>
        <p role="status" className="alert ok">
          {phase.replayed ? "Your order was already placed (replayed answer). " : "Order placed. "}
          <Link href={`/orders/${phase.orderId}`}>Open order {shortId(phase.orderId)}</Link>
        </p>
      </>
    );
  }

  if (lines.length === 0 && phase.kind !== "submitting") {
    return (
      <>
        <h1>Your cart</h1>
        <p>Your cart is empty.</p>
        <p>
          <Link href="/">Browse the catalog</Link> or <Link href="/orders">see your orders</Link>.
        </p>
      </>
    );
  }

  const signedIn = me.data != null && me.data.tenantId != null;

  return (
    <>
      <h1>Your cart</h1>
      {resumedNotice && submitting && (
        <p className="alert warn">You placed this order just before the page reloaded. Fetching its result; it will not be placed twice.</p>
      )}
      <table aria-label="Cart">
        <thead>
          <tr>
            <th scope="col">Product</th>
            <th scope="col">Price</th>
            <th scope="col">Quantity</th>
            <th scope="col">Total</th>
            <th scope="col">
              <span style={visuallyHidden}>Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {lines.map((line) => {
            const product = productById.get(line.productId);
            const name = product?.name ?? (products.isPending ? "Loading…" : "Product no longer sold");
            return (
              <tr key={line.productId}>
                <th scope="row">{name}</th>
                <td>{product ? formatMoney(product.priceCents, product.currency) : "—"}</td>
                <td>
                  <input
                    type="number"
                    min={1}
                    max={MAX_QUANTITY}
                    value={line.quantity}
                    aria-label={`Quantity of ${name}`}
                    disabled={submitting}
                    onChange={(e) => {
                      const q = Number(e.target.value);
                      if (Number.isFinite(q) && q >= 1) cartStore.setQuantity(line.productId, q);
                    }}
                    style={{ width: "5rem" }}
                  />
                </td>
                <td>{product ? formatMoney(product.priceCents * line.quantity, product.currency) : "—"}</td>
                <td>
                  <button type="button" className="secondary" disabled={submitting} onClick={() => cartStore.remove(line.productId)} aria-label={`Remove ${name}`}>
                    Remove
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={3}>
              Order total
            </th>
            <td className="price">{formatMoney(total, currency)}</td>
            <td />
          </tr>
        </tfoot>
      </table>

      <div className="row" style={{ marginTop: "1rem" }}>
        {me.isPending ? null : signedIn ? (
          <button type="button" onClick={onSubmit} disabled={submitting} aria-busy={submitting} aria-describedby={phase.kind === "failed" ? problemId : undefined}>
            {submitting ? "Placing order…" : "Place order"}
          </button>
        ) : (
          <p>
            <Link href="/signin?next=/cart">Sign in to place your order</Link> (your cart is kept).
          </p>
        )}
        {(trouble.dropNextResponse || trouble.doubleSubmitNext || trouble.slowMs > 0) && !submitting && (
          <span className="badge warn">Network trouble is on for the next order</span>
        )}
      </div>

      <div role="status" aria-live="polite" className="muted" style={{ minHeight: "1.5em", marginTop: "0.5rem" }}>
        {phase.kind === "submitting" ? phase.message : ""}
      </div>

      {phase.kind === "failed" && <ProblemAlert id={problemId} problem={phase.problem} />}
    </>
  );
}

function ProblemAlert({ id, problem }: { id: string; problem: CheckoutProblem & { serverMessage?: string; replayed: boolean } }) {
  return (
    <div role="alert" id={id} className="alert bad">
      <strong>{problem.title}.</strong> {problem.detail}
      {problem.serverMessage && <p className="muted" style={{ marginBottom: 0 }}>The shop said: {problem.serverMessage}</p>}
      {problem.replayed && (
        <p className="muted" style={{ marginBottom: 0 }}>
          This is the answer the shop gave the first time this cart was sent (replayed).
        </p>
      )}
      {problem.signIn && (
        <p style={{ marginBottom: 0 }}>
          <Link href="/signin?next=/cart">Sign in</Link>
        </p>
      )}
    </div>
  );
}
