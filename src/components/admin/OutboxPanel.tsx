"use client";
// The payment outbox: pending, delivered and dead-lettered messages; retry a dead one (audited).
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { formatTime, Pager, QueryState, REFRESH_MS, StatusBadge, useCursorStack } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { ColumnHeads } from "../ColumnHeads";

type Status = "PENDING" | "DELIVERED" | "DEAD";

export function OutboxPanel() {
  const trpc = useTRPC();
  const [status, setStatus] = useState<Status | "">("");
  const pages = useCursorStack();
  const outbox = useQuery({
    ...trpc.admin.outbox.list.queryOptions({
      ...(status ? { status } : {}),
      ...(pages.cursor ? { cursor: pages.cursor } : {}),
      limit: 50,
    }),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-labelledby="outbox-heading">
      <h2 id="outbox-heading">Outbox</h2>
      <label>
        Outbox status{" "}
        <select
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as Status | "");
            pages.reset();
          }}
        >
          <option value="">Any</option>
          <option value="PENDING">PENDING</option>
          <option value="DELIVERED">DELIVERED</option>
          <option value="DEAD">DEAD (dead-lettered)</option>
        </select>
      </label>
      <QueryState isPending={outbox.isPending} error={outbox.error}>
        {outbox.data?.items.length === 0 ? (
          <p className="muted">No outbox messages.</p>
        ) : (
          <div style={{ overflowX: "auto" }}>
            <table aria-label="Outbox messages">
              <ColumnHeads
                labels={[
                  "Created",
                  "Topic",
                  "Order",
                  "Status",
                  "Attempts",
                  "Next attempt",
                  "Last error",
                  "Action",
                ]}
              />
              <tbody>
                {outbox.data?.items.map((m) => (
                  <tr key={m.id}>
                    <td>{formatTime(m.createdAt)}</td>
                    <td className="mono">{m.topic}</td>
                    <td className="mono">{m.aggregateId.slice(0, 8)}</td>
                    <td>
                      <StatusBadge status={m.status} />
                    </td>
                    <td>{m.attempts}</td>
                    <td>
                      {m.status === "PENDING"
                        ? formatTime(m.nextAttemptAt)
                        : m.deliveredAt
                          ? `delivered ${formatTime(m.deliveredAt)}`
                          : "–"}
                    </td>
                    <td>{m.lastError ?? "–"}</td>
                    <td>{m.status === "DEAD" ? <RetryForm id={m.id} /> : null}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager pages={pages} nextCursor={outbox.data?.nextCursor} label="Outbox" />
      </QueryState>
    </section>
  );
}

function RetryForm({ id }: { id: string }) {
  const client = useTRPCClient();
  return (
    <ReasonActionForm
      button="Retry"
      done="Sent back to PENDING"
      send={(reason, context) => client.admin.outbox.retry.mutate({ id, reason }, { context })}
    />
  );
}
