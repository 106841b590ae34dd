"use client";
// Find a key by its value (what a client sent, from a log line or a ticket), exactly or by its
// start, across tenants or within one. The same lookup works by URL: /admin/keys/<value>.
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { skipToken, useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { formatTime, LeaseBadge, QueryState, StatusBadge } from "./ui";
import { ColumnHeads } from "../ColumnHeads";

export function KeySearch() {
  const trpc = useTRPC();
  const [q, setQ] = useState("");
  const [tenant, setTenant] = useState("");
  const [asked, setAsked] = useState<{ q: string; tenant?: string } | null>(null);
  const found = useQuery(
    trpc.admin.keys.search.queryOptions(asked ? { ...asked, limit: 50 } : skipToken),
  );

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (q.trim()) setAsked({ q: q.trim(), ...(tenant.trim() ? { tenant: tenant.trim() } : {}) });
  };

  return (
    <section aria-labelledby="search-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="search-heading">Find a key</h2>
      <form
        className="row card"
        role="search"
        aria-label="Find a key by its value"
        onSubmit={submit}
      >
        <label style={{ flex: "1 1 16rem" }}>
          Key value{" "}
          <input
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="the Idempotency-Key, or its start"
            maxLength={255}
            style={{ width: "100%" }}
          />
        </label>
        <label>
          In tenant{" "}
          <input
            value={tenant}
            onChange={(e) => setTenant(e.target.value)}
            placeholder="any"
            size={10}
          />
        </label>
        <button type="submit">Find</button>
      </form>
      {asked && (
        <QueryState isPending={found.isPending} error={found.error}>
          {found.data && found.data.items.length === 0 ? (
            <p role="status" className="muted">
              No key starts with <span className="mono">{asked.q}</span>
              {asked.tenant ? ` in ${asked.tenant}` : ""}. A removed key is in the{" "}
              <Link href={`/admin/audit?key=${encodeURIComponent(asked.q)}`}>audit log</Link>.
            </p>
          ) : (
            <table aria-label="Keys found">
              <ColumnHeads labels={["Key", "Tenant", "Status", "Procedure", "Lease", "Created"]} />
              <tbody>
                {found.data?.items.map((k) => (
                  <tr key={k.id}>
                    <td className="mono">
                      <Link href={`/admin/keys/${k.id}`}>{k.key}</Link>
                    </td>
                    <td>{k.tenant}</td>
                    <td>
                      <StatusBadge status={k.status} />
                    </td>
                    <td className="mono">{k.procedure}</td>
                    <td>
                      <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />
                    </td>
                    <td>{formatTime(k.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {found.data?.more && (
            <p className="muted">
              The first 50 matches, in key order: type more of the key to narrow them.
            </p>
          )}
        </QueryState>
      )}
    </section>
  );
}
