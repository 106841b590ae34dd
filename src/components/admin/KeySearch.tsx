"use client";
// Find a key by its value (what a client sent, from a log line or a ticket), exactly or by its
// start, across tenants or within one. The same lookup works by URL: /admin/keys/<value>.
import Link from "next/link";
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { QueryState } from "./ui";
import { SearchBar, TextField } from "./fields";
import { KEY_CELLS } from "./key-cells";
import { CellTable } from "../DataTable";
import { given } from "./list-filters";

const { Key, Tenant, Status, Procedure, Lease, Created } = KEY_CELLS;
const FOUND_CELLS = { Key, Tenant, Status, Procedure, Lease, Created };

type Asked = { q: string; tenant?: string };

export function KeySearch() {
  const [asked, setAsked] = useState<Asked | null>(null);
  return (
    <section aria-labelledby="search-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="search-heading">Find a key</h2>
      <KeySearchBar onSearch={setAsked} />
      {asked && <FoundKeys asked={asked} />}
    </section>
  );
}

function KeySearchBar({ onSearch }: { onSearch: (asked: Asked) => void }) {
  const [q, setQ] = useState("");
  const [tenant, setTenant] = useState("");
  const submit = () => q.trim() && onSearch({ q: q.trim(), ...given({ tenant }) });
  return (
    <SearchBar label="Find a key by its value" onSubmit={submit}>
      <TextField
        label="Key value"
        value={q}
        onChange={setQ}
        placeholder="the Idempotency-Key, or its start"
        maxLength={255}
        flex="1 1 16rem"
      />
      <TextField
        label="In tenant"
        value={tenant}
        onChange={setTenant}
        placeholder="any"
        size={10}
      />
      <button type="submit">Find</button>
    </SearchBar>
  );
}

function FoundKeys({ asked }: { asked: Asked }) {
  const trpc = useTRPC();
  const found = useQuery(trpc.admin.keys.search.queryOptions({ ...asked, limit: 50 }));
  return (
    <QueryState isPending={found.isPending} error={found.error}>
      {found.data && found.data.items.length === 0 ? (
        <p role="status" className="muted">
          No key starts with <span className="mono">{asked.q}</span>
          {asked.tenant ? ` in ${asked.tenant}` : ""}. A removed key is in the{" "}
          <Link href={`/admin/audit?key=${encodeURIComponent(asked.q)}`}>audit log</Link>.
        </p>
      ) : (
        <CellTable label="Keys found" cells={FOUND_CELLS} rows={found.data?.items ?? []} />
      )}
      {found.data?.more && (
        <p className="muted">
          The first 50 matches, in key order: type more of the key to narrow them.
        </p>
      )}
    </QueryState>
  );
}
