"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { cartCount, cartStore, useCart } from "@/components/cart-store";
import { formatMoney } from "@/components/format";
import { StoreUnavailable } from "@/components/StoreUnavailable";
import { isStoreUnreachable } from "@/trpc/store-status";

export default function CatalogPage() {
  const trpc = useTRPC();
  const products = useQuery(trpc.catalog.list.queryOptions());
  const cart = useCart();
  const inCart = (productId: string) =>
    cart.lines.find((l) => l.productId === productId)?.quantity ?? 0;
  const count = cartCount(cart);
  return (
    <>
      <div className="row" style={{ justifyContent: "space-between", marginBottom: "0.5rem" }}>
        <h1>Catalog</h1>
        {count > 0 && (
          <Link href="/cart" className="button">
            Go to cart ({count} {count === 1 ? "item" : "items"})
          </Link>
        )}
      </div>
      {products.isPending && <p className="muted">Loading…</p>}
      {products.isError &&
        (isStoreUnreachable(products.error) ? (
          <StoreUnavailable
            consequence={
              products.data
                ? "Stock shown may be out of date."
                : "The catalog cannot be shown until then."
            }
          />
        ) : (
          <p role="alert" className="alert bad">
            The catalog could not be loaded. Reload the page in a moment.
          </p>
        ))}
      <ul className="grid" aria-label="Products" style={{ listStyle: "none", padding: 0 }}>
        {products.data?.map((p) => {
          const quantity = inCart(p.id);
          const soldOut = p.stock <= quantity;
          return (
            <li key={p.id} className="card" aria-label={p.name}>
              <h2 style={{ fontSize: "1.05rem", margin: 0 }}>{p.name}</h2>
              <p className="muted">{p.description}</p>
              <p className="price">{formatMoney(p.priceCents, p.currency)}</p>
              <p className="muted" style={{ fontSize: "0.9rem" }}>
                {p.stock > 0 ? `${p.stock} in stock` : "Out of stock"}
                {quantity > 0 && ` · ${quantity} in your cart`}
              </p>
              <button
                type="button"
                onClick={() => cartStore.add(p.id)}
                disabled={soldOut}
                aria-label={`Add ${p.name} to cart`}
              >
                Add to cart
              </button>
            </li>
          );
        })}
      </ul>
    </>
  );
}
