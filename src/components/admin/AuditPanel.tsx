"use client";
// The audit log: every operator's action (and reconciliation's), who did it, when and why; filtered
// by actor, action (src/shared/audit-actions.ts) and key value (the key named by its value and
// tenant, not by a row id).
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import type { AuditView } from "@/server/api/routers/admin/view";
import { AUDIT_ACTIONS } from "@/shared/audit-actions";
import { formatTime, Pager, QueryState } from "./ui";
import { SearchBar, SelectField, TextField } from "./fields";
import { LIVE_LIST, useListFilters } from "./list-filters";
import { CellTable, type Cells } from "../DataTable";

/** An audit entry as it arrives over the wire (an `unknown` field comes back optional). */
export type Entry = Omit<AuditView, "details"> & { details?: unknown };

function Target({ a }: { a: Entry }) {
  if (a.targetType !== "IdempotencyKey") return `${a.targetType} ${a.targetId.slice(0, 8)}`;
  return (
    <>
      <Link href={`/admin/keys/${a.targetId}`}>{a.targetKey ?? a.targetId}</Link>
      {a.targetScope && <span className="muted"> in {a.targetScope}</span>}
    </>
  );
}

const AUDIT_CELLS: Cells<Entry> = {
  When: (a) => formatTime(a.createdAt),
  Who: (a) => a.actor,
  Action: (a) => <span className="mono">{a.action}</span>,
  "Key or target": (a) => (
    <span className="mono break-anywhere">
      <Target a={a} />
    </span>
  ),
  Reason: (a) => a.reason,
  "What was stored": (a) => (
    <details>
      <summary>details</summary>
      <pre className="mono" style={{ whiteSpace: "pre-wrap", maxWidth: "28rem" }}>
        {JSON.stringify(a.details, null, 2)}
      </pre>
    </details>
  ),
};

export function AuditTable({ entries, label }: { entries: Entry[]; label: string }) {
  return <CellTable label={label} cells={AUDIT_CELLS} rows={entries} />;
}

/** The filters start from the URL (a key page links to its entries). */
export function AuditPanel({ initial }: { initial: Record<"actor" | "action" | "key", string> }) {
  const trpc = useTRPC();
  const list = useListFilters(initial);
  const audit = useQuery({ ...trpc.admin.audit.list.queryOptions(list.input), ...LIVE_LIST });
  return (
    <>
      <SearchBar label="Filter the audit log">
        <TextField
          label="Actor"
          placeholder="admin@example.com"
          size={18}
          {...list.field("actor")}
        />
        <SelectField label="Action" options={AUDIT_ACTIONS} {...list.field("action")} />
        <TextField
          label="Key value"
          placeholder="the Idempotency-Key"
          flex="1 1 14rem"
          {...list.field("key")}
        />
      </SearchBar>
      <QueryState isPending={audit.isPending} error={audit.error}>
        {audit.data?.items.length === 0 ? (
          <p className="muted">No entries match these filters.</p>
        ) : (
          <AuditTable entries={audit.data?.items ?? []} label="Audit log" />
        )}
        <Pager pages={list.pages} nextCursor={audit.data?.nextCursor} label="Audit log" />
      </QueryState>
    </>
  );
}
