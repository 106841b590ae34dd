"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatDateTime, formatMoney, shortId, statusLabel } from "./format";
import { LoadError } from "./LoadError";
import { DataTable } from "./DataTable";

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

/** One page of the account's orders, newest first. */
function useOrdersPage(cursor: string | undefined) {
  const trpc = useTRPC();
  return useQuery(
    trpc.orders.list.queryOptions(
      { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) },
      { retry: false },
    ),
  );
}

/** A page of orders: its cursor (none for the first), and what shows the next, if it is the last. */
type PageProps = { cursor?: string; first: boolean; onMore?: (cursor: string) => void };

function OrdersPage({ cursor, first, onMore }: PageProps) {
  const orders = useOrdersPage(cursor);
  if (orders.isPending) return <p className="muted">Loading…</p>;
  if (orders.isError)
    return (
      <LoadError
        error={orders.error}
        subject="Your orders"
        consequence="Your orders cannot be shown until then."
        signIn={{ next: "/orders", to: "see your orders" }}
      />
    );
  const { items, nextCursor } = orders.data;
  if (first && items.length === 0)
    return (
      <p>
        No orders yet. <Link href="/">Browse the catalog</Link>.
      </p>
    );
  return (
    <>
      <DataTable
        label={first ? "Orders" : "Older orders"}
        columns={["Order", "Items", "Total", "Payment"]}
        style={{ marginBottom: "1rem" }}
      >
        {items.map((order) => (
          <OrderRow key={order.id} order={order} />
        ))}
      </DataTable>
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

type OrderSummary = RouterOutputs["orders"]["list"]["items"][number];

function OrderRow({ order }: { order: OrderSummary }) {
  const label = statusLabel(order.status);
  return (
    <tr>
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
}
