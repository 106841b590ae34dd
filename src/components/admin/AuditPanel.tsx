"use client";
// The audit log: every bust, release and outbox retry, who did it, when and why.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import type { AuditView } from "@/server/api/routers/admin/keys.types";

/** An audit entry as it arrives over the wire (an `unknown` field comes back optional). */
type Entry = Omit<AuditView, "details"> & { details?: unknown };
import { formatTime, Pager, QueryState, REFRESH_MS, useCursorStack } from "./ui";


export function AuditTable({ entries, label }: { entries: Entry[]; label: string }) {
  return (
    <div style={{ overflowX: "auto" }}>
      <table aria-label={label}>
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>Action</th>
            <th>Target</th>
            <th>Reason</th>
            <th>What was stored</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((a) => (
            <tr key={a.id}>
              <td>{formatTime(a.createdAt)}</td>
              <td>{a.actor}</td>
              <td className="mono">{a.action}</td>
              <td className="mono">
                {a.targetType === "IdempotencyKey" ? <Link href={`/admin/keys/${a.targetId}`}>{a.targetId.slice(0, 8)}</Link> : `${a.targetType} ${a.targetId.slice(0, 8)}`}
              </td>
              <td>{a.reason}</td>
              <td>
                <details>
                  <summary>details</summary>
                  <pre className="mono" style={{ whiteSpace: "pre-wrap", maxWidth: "28rem" }}>{JSON.stringify(a.details, null, 2)}</pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AuditPanel() {
  const trpc = useTRPC();
  const pages = useCursorStack();
  const audit = useQuery({ ...trpc.admin.audit.list.queryOptions({ limit: 50, ...(pages.cursor ? { cursor: pages.cursor } : {}) }), refetchInterval: REFRESH_MS });
  return (
    <QueryState isPending={audit.isPending} error={audit.error}>
      {audit.data?.items.length === 0 ? <p className="muted">No manual actions yet.</p> : <AuditTable entries={audit.data?.items ?? []} label="Audit log" />}
      <Pager pages={pages} nextCursor={audit.data?.nextCursor} label="Audit log" />
    </QueryState>
  );
}
