"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { cartCount, useCart } from "./cart-store";

export function Nav() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const count = cartCount(useCart());
  return (
    <header className="nav">
      <nav className="nav-inner" aria-label="Main">
        <Link href="/" className="brand">once</Link>
        <Link href="/">Catalog</Link>
        <Link href="/cart">Cart{count > 0 ? ` (${count})` : ""}</Link>
        <Link href="/orders">Orders</Link>
        {me.data?.role === "ADMIN" && <Link href="/admin">Admin</Link>}
        <span className="spacer" />
        {me.data ? (
          <form action="/api/session/signout" method="post" className="row">
            <span className="muted">Signed in as {me.data.name}{me.data.tenantId ? ` (${me.data.tenantId})` : ""}</span>
            <button type="submit" className="secondary">Sign out</button>
          </form>
        ) : me.isPending ? null : (
          // Nothing while we ask who is signed in: a "Sign in" link that then vanishes misleads.
          <Link href="/signin">Sign in</Link>
        )}
      </nav>
    </header>
  );
}
