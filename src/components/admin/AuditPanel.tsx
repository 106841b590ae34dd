"use client";
// The audit log: every bust, release and outbox retry, who did it, when and why; filtered by
// actor, action and key value (the key named by its value and tenant, not by a row id).
import Link from "next/link";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import type { AuditView } from "@/server/api/routers/admin/keys.types";
import { formatTime, Pager, QueryState, REFRESH_MS, useCursorStack } from "./ui";
import { ColumnHeads } from "../ColumnHeads";

/** An audit entry as it arrives over the wire (an `unknown` field comes back optional). */
type Entry = Omit<AuditView, "details"> & { details?: unknown };

const ACTIONS = ["key.bust", "key.release", "outbox.retry"] as const;

function Target({ a }: { a: Entry }) {
  if (a.targetType !== "IdempotencyKey") return <>{`${a.targetType} ${a.targetId.slice(0, 8)}`}</>;
  return (
    <>
      <Link href={`/admin/keys/${a.targetId}`}>{a.targetKey ?? a.targetId}</Link>
      {a.targetScope && <span className="muted"> in {a.targetScope}</span>}
    </>
  );
}

export function AuditTable({ entries, label }: { entries: Entry[]; label: string }) {
  return (
    <div style={{ overflowX: "auto" }}>
      <table aria-label={label}>
        <ColumnHeads
          labels={["When", "Who", "Action", "Key or target", "Reason", "What was stored"]}
        />
        <tbody>
          {entries.map((a) => (
            <tr key={a.id}>
              <td>{formatTime(a.createdAt)}</td>
              <td>{a.actor}</td>
              <td className="mono">{a.action}</td>
              <td className="mono" style={{ wordBreak: "break-all" }}>
                <Target a={a} />
              </td>
              <td>{a.reason}</td>
              <td>
                <details>
                  <summary>details</summary>
                  <pre className="mono" style={{ whiteSpace: "pre-wrap", maxWidth: "28rem" }}>
                    {JSON.stringify(a.details, null, 2)}
                  </pre>
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export interface AuditFilters {
  actor?: string;
  action?: string;
  key?: string;
}

export function AuditPanel({ initial = {} }: { initial?: AuditFilters }) {
  const trpc = useTRPC();
  const pages = useCursorStack();
  const [actor, setActor] = useState(initial.actor ?? "");
  const [action, setAction] = useState(initial.action ?? "");
  const [key, setKey] = useState(initial.key ?? "");
  const input = {
    limit: 50,
    ...(actor.trim() ? { actor: actor.trim() } : {}),
    ...(action ? { action } : {}),
    ...(key.trim() ? { key: key.trim() } : {}),
    ...(pages.cursor ? { cursor: pages.cursor } : {}),
  };
  const audit = useQuery({
    ...trpc.admin.audit.list.queryOptions(input),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });
  const change = (set: (v: string) => void) => (v: string) => {
    set(v);
    pages.reset();
  };
  return (
    <>
      <form
        className="row card"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          Actor{" "}
          <input
            value={actor}
            onChange={(e) => change(setActor)(e.target.value)}
            placeholder="admin@example.com"
            size={18}
          />
        </label>
        <label>
          Action{" "}
          <select value={action} onChange={(e) => change(setAction)(e.target.value)}>
            <option value="">Any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label style={{ flex: "1 1 14rem" }}>
          Key value{" "}
          <input
            value={key}
            onChange={(e) => change(setKey)(e.target.value)}
            placeholder="the Idempotency-Key"
            style={{ width: "100%" }}
          />
        </label>
      </form>
      <QueryState isPending={audit.isPending} error={audit.error}>
        {audit.data?.items.length === 0 ? (
          <p className="muted">No entries match these filters.</p>
        ) : (
          <AuditTable entries={audit.data?.items ?? []} label="Audit log" />
        )}
        <Pager pages={pages} nextCursor={audit.data?.nextCursor} label="Audit log" />
      </QueryState>
    </>
  );
}
