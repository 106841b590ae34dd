"use client";
// One order, with its payment status kept live: the payment runs after the order commits (the
// outbox worker), so the page polls while the order is still awaiting payment, and the
// confirmation says what is still to come only while something is.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { recoveryInterval } from "@/trpc/store-status";
import { formatDateTime, formatMoney, shortId, statusLabel, type OrderStatus } from "./format";
import { LoadingOrError } from "./LoadError";
import { DataTable } from "./DataTable";
import { Facts } from "./Facts";

/** How often to ask while payment is pending: the worker usually settles within a second or two. */
const PAYMENT_POLL_MS = 1_000;

/**
 * The order, asked again while its payment is pending or the store is out of reach; a 4xx (not
 * signed in, no such order) is not retried.
 */
function useOrder(id: string) {
  const trpc = useTRPC();
  return useQuery(
    trpc.orders.byId.queryOptions(
      { id },
      {
        refetchInterval: (query) =>
          query.state.data?.status === "PENDING" ? PAYMENT_POLL_MS : recoveryInterval(query),
        retry: (count, error) => (error.data?.httpStatus ?? 500) >= 500 && count < 2,
      },
    ),
  );
}

const NO_SUCH_ORDER = (
  <p role="alert" className="alert bad">
    There is no such order in your account. <Link href="/orders">See your orders</Link>.
  </p>
);

export function OrderView({
  id,
  placed,
  replays,
}: {
  id: string;
  placed?: "new" | "replayed";
  replays?: number;
}) {
  const order = useOrder(id);
  return (
    <>
      <p>
        <Link href="/orders">← All orders</Link>
      </p>
      <h1>
        Order <span className="mono">{shortId(id)}</span>
      </h1>
      {placed === "new" && <PlacedBanner status={order.data?.status} replays={replays} />}
      {placed === "replayed" && <ReplayedBanner />}
      <LoadingOrError
        query={order}
        subject="The order"
        stale="The payment status shown may be out of date."
        missing="This order cannot be shown until then."
        signIn={{ next: `/orders/${id}`, to: "see this order" }}
        notFound={NO_SUCH_ORDER}
      />
      {order.data && <OrderFacts order={order.data} />}
      {order.data && <OrderItems order={order.data} />}
    </>
  );
}

/** What payment brings next, while it is still to come; nothing once it is settled. */
const PAYMENT_OUTLOOK: Record<OrderStatus, string> = {
  PENDING: "Payment runs in the background; this page updates by itself.",
  PAID: "Payment received.",
  PAYMENT_FAILED: "The payment did not go through; the order is not charged.",
};

function ReplayedBanner() {
  return (
    <div className="alert ok" role="status">
      <strong>Your order was already placed: this is the replayed answer.</strong> The shop had
      received this checkout before (a lost response, a second click, a reload or another tab) and
      answered with the same order. You have one order and pay once.
    </div>
  );
}

function PlacedBanner({ status, replays }: { status?: OrderStatus; replays?: number }) {
  return (
    <div className="alert ok" role="status">
      <strong>Order placed.</strong> Thank you!{status ? ` ${PAYMENT_OUTLOOK[status]}` : ""}
      {replays ? (
        <p style={{ marginBottom: 0 }}>
          The same order was sent {replays + 1} times at once; the other{" "}
          {replays === 1 ? "request was" : "requests were"} answered with this same order
          (replayed): one order, one charge.
        </p>
      ) : null}
    </div>
  );
}

type OrderData = RouterOutputs["orders"]["byId"];

function OrderFacts({ order }: { order: OrderData }) {
  const label = statusLabel(order.status);
  const payment = (
    <span aria-live="polite">
      <span className={`badge ${label.tone}`}>{label.text}</span>
      {order.status === "PENDING" && <span className="muted"> (checking…)</span>}
    </span>
  );
  return (
    <Facts
      className="card"
      mutedTerms
      of={[
        ["Payment", payment],
        ["Charge", <code>{order.chargeId ?? "none yet"}</code>],
        ["Placed", formatDateTime(order.createdAt)],
        ["Order id", <code>{order.id}</code>],
      ]}
    />
  );
}

function OrderItems({ order }: { order: OrderData }) {
  const total = (
    <tr>
      <th scope="row" colSpan={3}>
        Order total
      </th>
      <td className="price">{formatMoney(order.totalCents, order.currency)}</td>
    </tr>
  );
  return (
    <DataTable
      label="Items"
      columns={["Product", "Price", "Quantity", "Total"]}
      style={{ marginTop: "1rem" }}
      foot={total}
    >
      {order.items.map((item) => (
        <tr key={item.productId}>
          <th scope="row">{item.name}</th>
          <td>{formatMoney(item.unitPriceCents, order.currency)}</td>
          <td>{item.quantity}</td>
          <td>{formatMoney(item.lineTotalCents, order.currency)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
