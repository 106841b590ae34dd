"use client";
// The payment outbox: pending, delivered and dead-lettered messages; retry a dead one (audited).
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatTime, Pager, QueryState, StatusBadge } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { SelectField } from "./fields";
import { LIVE_LIST, useListFilters } from "./list-filters";
import { DataTable } from "../DataTable";

type Message = RouterOutputs["admin"]["outbox"]["list"]["items"][number];

const STATUSES = ["PENDING", "DELIVERED", "DEAD"] as const;
type Status = (typeof STATUSES)[number];

const COLUMNS = [
  "Created",
  "Topic",
  "Order",
  "Status",
  "Attempts",
  "Next attempt",
  "Last error",
  "Action",
];

export function OutboxPanel() {
  const trpc = useTRPC();
  const list = useListFilters<{ status: Status | "" }>({ status: "" });
  const outbox = useQuery({ ...trpc.admin.outbox.list.queryOptions(list.input), ...LIVE_LIST });
  return (
    <section aria-labelledby="outbox-heading">
      <h2 id="outbox-heading">Outbox</h2>
      <SelectField
        label="Outbox status"
        options={STATUSES}
        labels={{ DEAD: "DEAD (dead-lettered)" }}
        {...list.field("status")}
      />
      <QueryState isPending={outbox.isPending} error={outbox.error}>
        {outbox.data?.items.length === 0 ? (
          <p className="muted">No outbox messages.</p>
        ) : (
          <DataTable label="Outbox messages" columns={COLUMNS} scroll>
            {outbox.data?.items.map((m) => (
              <MessageRow key={m.id} m={m} />
            ))}
          </DataTable>
        )}
        <Pager pages={list.pages} nextCursor={outbox.data?.nextCursor} label="Outbox" />
      </QueryState>
    </section>
  );
}

function MessageRow({ m }: { m: Message }) {
  return (
    <tr>
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
      <td>
        {m.status === "DEAD" && (
          <ReasonActionForm
            button="Retry"
            done="Sent back to PENDING"
            send={(client, reason, context) =>
              client.admin.outbox.retry.mutate({ id: m.id, reason }, { context })
            }
          />
        )}
      </td>
    </tr>
  );
}
