"use client";
// The cart page's checkout: markup only. The behaviour (the intent, its key, sending, resuming
// after a reload) is in checkout/use-checkout.ts.
import Link from "next/link";
import { useId } from "react";
import { CartTable } from "./checkout/CartTable";
import { ProblemAlert } from "./checkout/ProblemAlert";
import { useCheckout } from "./checkout/use-checkout";
import { shortId } from "./format";
import { StoreUnavailable } from "./LoadError";
import { useNetworkTrouble } from "./NetworkTroublePanel";

type CheckoutState = ReturnType<typeof useCheckout>;

export function Checkout() {
  const checkout = useCheckout();
  return (
    <>
      <h1>Your cart</h1>
      <CartBody checkout={checkout} />
    </>
  );
}

/** Under the title: the order just placed, an empty cart, or the cart and its checkout. */
function CartBody({ checkout }: { checkout: CheckoutState }) {
  const { phase, cart, products } = checkout;
  const submitting = phase.kind === "submitting";
  if (phase.kind === "placed")
    return (
      <p role="status" className="alert ok">
        {phase.replayed ? "Your order was already placed (replayed answer). " : "Order placed. "}
        <Link href={`/orders/${phase.orderId}`}>Open order {shortId(phase.orderId)}</Link>
      </p>
    );
  if (cart.lines.length === 0 && !submitting)
    return (
      <>
        <p>Your cart is empty.</p>
        <p>
          <Link href="/">Browse the catalog</Link> or <Link href="/orders">see your orders</Link>.
        </p>
      </>
    );
  return (
    <>
      {checkout.resumed && submitting && (
        <p className="alert warn">
          You placed this order just before the page reloaded. Fetching its result; it will not be
          placed twice.
        </p>
      )}
      {checkout.storeUnreachable && !submitting && (
        <StoreUnavailable consequence="Orders cannot be placed until then." />
      )}
      <CartTable lines={cart.lines} products={products} disabled={submitting} />
      <CheckoutActions checkout={checkout} />
    </>
  );
}

function CheckoutActions({ checkout }: { checkout: CheckoutState }) {
  const { phase } = checkout;
  const trouble = useNetworkTrouble();
  const problemId = useId();
  const submitting = phase.kind === "submitting";
  const troubleOn = trouble.dropNextResponse || trouble.doubleSubmitNext || trouble.slowMs > 0;
  return (
    <>
      <div className="row" style={{ marginTop: "1rem" }}>
        <PlaceOrder checkout={checkout} problemId={problemId} />
        {troubleOn && !submitting && (
          <span className="badge warn">Network trouble is on for the next order</span>
        )}
      </div>
      <div
        role="status"
        aria-live="polite"
        className="muted"
        style={{ minHeight: "1.5em", marginTop: "0.5rem" }}
      >
        {submitting ? phase.message : ""}
      </div>
      {phase.kind === "failed" && <ProblemAlert id={problemId} problem={phase.problem} />}
    </>
  );
}

/** The button for a shop account, a sign-in link for a guest; nothing while that is not known. */
function PlaceOrder({
  checkout: { phase, signedIn, submit },
  problemId,
}: {
  checkout: CheckoutState;
  /** The alert that says why the last try failed, which the button then points to. */
  problemId: string;
}) {
  const submitting = phase.kind === "submitting";
  if (signedIn === true) {
    return (
      <button
        type="button"
        onClick={submit}
        disabled={submitting}
        aria-busy={submitting}
        aria-describedby={phase.kind === "failed" ? problemId : undefined}
      >
        {submitting ? "Placing order…" : "Place order"}
      </button>
    );
  }
  if (signedIn === false) {
    return (
      <p>
        <Link href="/signin?next=/cart">Sign in to place your order</Link> (your cart is kept).
      </p>
    );
  }
  return null; // not known yet (asking, or the database is out of reach): claim nothing
}
