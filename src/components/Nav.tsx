"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "@/trpc/react";
import { accountOwner, cartCount, cartStore, GUEST, useCart } from "./cart-store";

export function Nav() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const count = cartCount(useCart());

  // The cart belongs to whoever the session says is signed in (cart-store.ts). While the session
  // is unknown (still asking, or the database is out of reach) the last owner's cart stays.
  useEffect(() => {
    if (me.data !== undefined) cartStore.setOwner(me.data ? accountOwner(me.data.email) : GUEST);
  }, [me.data]);

  return (
    <header className="nav">
      <nav className="nav-inner" aria-label="Main">
        <div className="nav-links">
          <Link href="/" className="brand">
            {/* A static file from public/ (a 20 px SVG needs no image optimiser); the tab icon is
                app/icon.svg, Next's icon file convention, which adds its <link rel="icon"> itself. */}
            <img src="/brand.svg" alt="" width={20} height={20} />
            once
          </Link>
          <Link href="/">Catalog</Link>
          <Link href="/cart">Cart{count > 0 ? ` (${count})` : ""}</Link>
          <Link href="/orders">Orders</Link>
          {me.data?.role === "ADMIN" && <Link href="/admin">Admin</Link>}
        </div>
        <Account me={me.data} />
      </nav>
    </header>
  );
}

/**
 * Who is signed in, with a sign-out button; a sign-in link for a visitor (`null`); nothing while
 * that is not known (`undefined`: asking, or the database is out of reach), where a "Sign in" link
 * would mislead.
 */
function Account({ me }: { me: { name: string; tenantId: string | null } | null | undefined }) {
  if (me) {
    return (
      <form action="/api/session/signout" method="post" className="nav-account">
        <span className="muted">
          Signed in as {me.name}
          {me.tenantId ? ` (${me.tenantId})` : ""}
        </span>
        <button type="submit" className="secondary">
          Sign out
        </button>
      </form>
    );
  }
  if (me === null) {
    return (
      <Link href="/signin" className="nav-account">
        Sign in
      </Link>
    );
  }
  return null;
}
