"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/trpc/react";
import { isStoreUnreachable } from "@/trpc/store-status";
import { formatDateTime, formatMoney, shortId, statusLabel } from "./format";
import { StoreUnavailable } from "./StoreUnavailable";
import { ColumnHeads } from "./ColumnHeads";

const PAGE_SIZE = 20;

// Pages are plain queries, one per cursor ("Show older orders" adds the next cursor): orders.list's
// input is strict, so React Query's infinite-query extras (`direction`) would be refused.
export function OrdersList() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return (
    <>
      <h1>Your orders</h1>
      {cursors.map((cursor, i) => (
        <OrdersPage
          key={cursor ?? "first"}
          cursor={cursor}
          first={i === 0}
          onMore={i === cursors.length - 1 ? (next) => setCursors((c) => [...c, next]) : undefined}
        />
      ))}
    </>
  );
}

function OrdersPage({
  cursor,
  first,
  onMore,
}: {
  cursor?: string;
  first: boolean;
  onMore?: (cursor: string) => void;
}) {
  const trpc = useTRPC();
  const orders = useQuery(
    trpc.orders.list.queryOptions(
      { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) },
      { retry: false },
    ),
  );
  if (isStoreUnreachable(orders.error))
    return <StoreUnavailable consequence="Your orders cannot be shown until then." />;
  const status = orders.error?.data?.httpStatus;
  const rows = orders.data?.items ?? [];
  const nextCursor = orders.data?.nextCursor;

  if (orders.isPending) return <p className="muted">Loading…</p>;
  if (orders.isError) {
    return status === 401 || status === 403 ? (
      <p className="alert warn">
        <Link href="/signin?next=/orders">Sign in as a shop account</Link> to see your orders.
      </p>
    ) : (
      <p role="alert" className="alert bad">
        Your orders could not be loaded. Reload the page in a moment.
      </p>
    );
  }
  if (first && rows.length === 0) {
    return (
      <p>
        No orders yet. <Link href="/">Browse the catalog</Link>.
      </p>
    );
  }
  return (
    <>
      <table aria-label={first ? "Orders" : "Older orders"} style={{ marginBottom: "1rem" }}>
        <ColumnHeads labels={["Order", "Items", "Total", "Payment"]} />
        <tbody>
          {rows.map((order) => {
            const label = statusLabel(order.status);
            return (
              <tr key={order.id}>
                <th scope="row">
                  <Link href={`/orders/${order.id}`} aria-label={`Order ${shortId(order.id)}`}>
                    <span className="mono">{shortId(order.id)}</span>
                  </Link>
                  <span className="muted sub">{formatDateTime(order.createdAt)}</span>
                </th>
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
      {nextCursor && onMore && (
        <p>
          <button type="button" className="secondary" onClick={() => onMore(nextCursor)}>
            Show older orders
          </button>
        </p>
      )}
    </>
  );
}
