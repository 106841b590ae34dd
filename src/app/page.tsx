"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";

export default function CatalogPage() {
  const trpc = useTRPC();
  const products = useQuery(trpc.catalog.list.queryOptions());
  return (
    <>
      <h1>Catalog</h1>
      {products.isPending && <p className="muted">Loading…</p>}
      <ul className="grid" aria-label="Products" style={{ listStyle: "none", padding: 0 }}>
        {products.data?.map((p) => (
          <li key={p.id} className="card">
            <h2 style={{ fontSize: "1.05rem", margin: 0 }}>{p.name}</h2>
            <p className="muted">{p.description}</p>
            <p className="price">{(p.priceCents / 100).toFixed(2)} {p.currency}</p>
          </li>
        ))}
      </ul>
    </>
  );
}
