"use client";
// The keys table: filters (status, tenant, procedure prefix, stuck), newest first, keyset paging,
// and a refetch every couple of seconds while the page is open. With "stuck leases only", the
// stuck leases the filter selects can be released in bulk.
import Link from "next/link";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import {
  formatTime,
  LeaseBadge,
  Pager,
  QueryState,
  REFRESH_MS,
  StatusBadge,
  useCursorStack,
} from "./ui";
import { BulkRelease } from "./BulkRelease";
import { ColumnHeads } from "../ColumnHeads";

type Status = "PROCESSING" | "COMPLETED" | "FAILED";

export function KeysPanel() {
  const trpc = useTRPC();
  const [status, setStatus] = useState<Status | "">("");
  const [tenant, setTenant] = useState("");
  const [procedure, setProcedure] = useState("");
  const [stuck, setStuck] = useState(false);
  const pages = useCursorStack();

  const input = {
    ...(status ? { status } : {}),
    ...(tenant.trim() ? { tenant: tenant.trim() } : {}),
    ...(procedure.trim() ? { procedure: procedure.trim() } : {}),
    ...(stuck ? { stuck: true } : {}),
    ...(pages.cursor ? { cursor: pages.cursor } : {}),
    limit: 50,
  };
  const keys = useQuery({
    ...trpc.admin.keys.list.queryOptions(input),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  });

  /** A filter change starts again from the newest key. */
  const change =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      pages.reset();
    };

  return (
    <section aria-labelledby="keys-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="keys-heading">Keys</h2>
      <form
        className="row card"
        role="search"
        aria-label="Filter keys"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          Status{" "}
          <select value={status} onChange={(e) => change(setStatus)(e.target.value as Status | "")}>
            <option value="">Any</option>
            <option value="PROCESSING">PROCESSING</option>
            <option value="COMPLETED">COMPLETED</option>
            <option value="FAILED">FAILED</option>
          </select>
        </label>
        <label>
          Tenant{" "}
          <input
            value={tenant}
            onChange={(e) => change(setTenant)(e.target.value)}
            placeholder="acme"
            size={10}
          />
        </label>
        <label>
          Procedure starts with{" "}
          <input
            value={procedure}
            onChange={(e) => change(setProcedure)(e.target.value)}
            placeholder="checkout."
            size={20}
          />
        </label>
        <label>
          <input
            type="checkbox"
            checked={stuck}
            onChange={(e) => change(setStuck)(e.target.checked)}
          />{" "}
          Stuck leases only
        </label>
        {keys.isFetching && (
          <span className="muted" aria-hidden>
            refreshing…
          </span>
        )}
      </form>
      {stuck && (
        <BulkRelease
          tenant={tenant.trim() || undefined}
          procedure={procedure.trim() || undefined}
        />
      )}
      <QueryState isPending={keys.isPending} error={keys.error}>
        {keys.data && keys.data.items.length === 0 ? (
          <p className="muted">No keys match these filters.</p>
        ) : (
          <div style={{ overflowX: "auto" }}>
            <table aria-label="Idempotency keys">
              <ColumnHeads
                labels={[
                  "Key",
                  "Status",
                  "Tenant",
                  "Procedure",
                  "Attempts",
                  "Lease",
                  "Created",
                  "Expires",
                ]}
              />
              <tbody>
                {keys.data?.items.map((k) => (
                  <tr key={k.id}>
                    <td className="mono">
                      <Link href={`/admin/keys/${k.id}`}>{k.key}</Link>
                    </td>
                    <td>
                      <StatusBadge status={k.status} />
                    </td>
                    <td>{k.tenant}</td>
                    <td className="mono">{k.procedure}</td>
                    <td>{k.attempts}</td>
                    <td>
                      <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />
                    </td>
                    <td>{formatTime(k.createdAt)}</td>
                    <td>{formatTime(k.expiresAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager pages={pages} nextCursor={keys.data?.nextCursor} label="Keys" />
      </QueryState>
    </section>
  );
}
