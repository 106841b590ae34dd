// The one message every shop page shows while the shop cannot reach its database. It claims
// nothing it does not know (no "product no longer sold", no "sign in": the data is just out of
// reach) and says the page comes back by itself: failed queries poll until the database answers
// again (src/trpc/store-status.ts).
/** `consequence`: what this page cannot do meanwhile, e.g. "Orders cannot be placed until then." */
export function StoreUnavailable({ consequence }: { consequence?: string }) {
  return (
    <div role="alert" className="alert warn">
      <strong>The shop cannot reach its database right now.</strong>{" "}
      {consequence ? `${consequence} ` : ""}Your cart is kept, and this page updates by itself as
      soon as the database is back.
    </div>
  );
}
