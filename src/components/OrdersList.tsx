"use client";
import Link from "next/link";
import { useInfiniteQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { formatDateTime, formatMoney, shortId, statusLabel } from "./format";

const PAGE_SIZE = 20;

export function OrdersList() {
  const trpc = useTRPC();
  const orders = useInfiniteQuery(
    trpc.orders.list.infiniteQueryOptions(
      { limit: PAGE_SIZE },
      { getNextPageParam: (page) => page.nextCursor ?? undefined, retry: false },
    ),
  );
  const rows = orders.data?.pages.flatMap((p) => p.items) ?? [];
  const status = orders.error?.data?.httpStatus;

  return (
    <>
      <h1>Your orders</h1>
      {orders.isPending && <p className="muted">Loading…</p>}
      {orders.isError &&
        (status === 401 || status === 403 ? (
          <p className="alert warn">
            <Link href="/signin?next=/orders">Sign in as a shop account</Link> to see your orders.
          </p>
        ) : (
          <p role="alert" className="alert bad">
            Your orders could not be loaded. Reload the page in a moment.
          </p>
        ))}
      {orders.isSuccess && rows.length === 0 && (
        <p>
          No orders yet. <Link href="/">Browse the catalog</Link>.
        </p>
      )}
      {rows.length > 0 && (
        <table aria-label="Orders">
          <thead>
            <tr>
              <th scope="col">Order</th>
              <th scope="col">Placed</th>
              <th scope="col">Items</th>
              <th scope="col">Total</th>
              <th scope="col">Payment</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((order) => {
              const label = statusLabel(order.status);
              return (
                <tr key={order.id}>
                  <th scope="row">
                    <Link href={`/orders/${order.id}`} aria-label={`Order ${shortId(order.id)}`}>
                      <span className="mono">{shortId(order.id)}</span>
                    </Link>
                  </th>
                  <td>{formatDateTime(order.createdAt)}</td>
                  <td>{order.items.map((i) => `${i.quantity} × ${i.name}`).join(", ")}</td>
                  <td>{formatMoney(order.totalCents, order.currency)}</td>
                  <td>
                    <span className={`badge ${label.tone}`}>{label.text}</span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {orders.hasNextPage && (
        <p>
          <button type="button" className="secondary" onClick={() => void orders.fetchNextPage()} disabled={orders.isFetchingNextPage}>
            {orders.isFetchingNextPage ? "Loading…" : "Show older orders"}
          </button>
        </p>
      )}
    </>
  );
}
