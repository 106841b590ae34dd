"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { cartCount, cartStore, useCart } from "@/components/cart-store";
import { formatMoney } from "@/components/format";
import { LoadingOrError } from "@/components/LoadError";

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
      <LoadingOrError
        query={products}
        subject="The catalog"
        stale="Stock shown may be out of date."
        missing="The catalog cannot be shown until then."
      />
      <ul className="grid bare" aria-label="Products">
        {products.data?.map((p) => (
          <ProductCard key={p.id} product={p} inCart={inCart(p.id)} />
        ))}
      </ul>
    </>
  );
}

type Product = RouterOutputs["catalog"]["list"][number];

/** One product: what it is, its price, its stock, and how many are in the cart already. */
function ProductCard({ product: p, inCart }: { product: Product; inCart: number }) {
  return (
    <li className="card" aria-label={p.name}>
      <h2 style={{ margin: 0 }}>{p.name}</h2>
      <p className="muted">{p.description}</p>
      <p className="price">{formatMoney(p.priceCents, p.currency)}</p>
      <p className="muted" style={{ fontSize: "0.9rem" }}>
        {p.stock > 0 ? `${p.stock} in stock` : "Out of stock"}
        {inCart > 0 && ` · ${inCart} in your cart`}
      </p>
      <button
        type="button"
        onClick={() => cartStore.add(p.id)}
        disabled={p.stock <= inCart}
        aria-label={`Add ${p.name} to cart`}
      >
        Add to cart
      </button>
    </li>
  );
}
