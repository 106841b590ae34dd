"use client";
// The keys table: filters (status, tenant, procedure prefix, stuck), newest first, keyset paging,
// and a refetch every couple of seconds while the page is open. With "stuck leases only", the
// stuck leases the filter selects can be released in bulk.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { Pager, QueryState } from "./ui";
import { BulkRelease } from "./BulkRelease";
import { CheckField, SearchBar, SelectField, TextField } from "./fields";
import { KEY_CELLS } from "./key-cells";
import { CellTable } from "../DataTable";
import { given, LIVE_LIST, useListFilters } from "./list-filters";

const STATUSES = ["PROCESSING", "COMPLETED", "FAILED"] as const;
type Status = (typeof STATUSES)[number];

function useKeyFilters() {
  return useListFilters<{ status: Status | ""; tenant: string; procedure: string; stuck: boolean }>(
    { status: "", tenant: "", procedure: "", stuck: false },
  );
}

export function KeysPanel() {
  const trpc = useTRPC();
  const list = useKeyFilters();
  const keys = useQuery({ ...trpc.admin.keys.list.queryOptions(list.input), ...LIVE_LIST });
  const { tenant, procedure } = given(list.filters);
  return (
    <section aria-labelledby="keys-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="keys-heading">Keys</h2>
      <KeyFilters list={list} refreshing={keys.isFetching} />
      {list.filters.stuck && <BulkRelease tenant={tenant} procedure={procedure} />}
      <QueryState isPending={keys.isPending} error={keys.error}>
        {keys.data && keys.data.items.length === 0 ? (
          <p className="muted">No keys match these filters.</p>
        ) : (
          <CellTable label="Idempotency keys" cells={KEY_CELLS} rows={keys.data?.items ?? []} />
        )}
        <Pager pages={list.pages} nextCursor={keys.data?.nextCursor} label="Keys" />
      </QueryState>
    </section>
  );
}

function KeyFilters({
  list: { field },
  refreshing,
}: {
  list: ReturnType<typeof useKeyFilters>;
  refreshing: boolean;
}) {
  return (
    <SearchBar label="Filter keys">
      <SelectField label="Status" options={STATUSES} {...field("status")} />
      <TextField label="Tenant" placeholder="acme" size={10} {...field("tenant")} />
      <TextField
        label="Procedure starts with"
        placeholder="checkout."
        size={20}
        {...field("procedure")}
      />
      <CheckField label="Stuck leases only" {...field("stuck")} />
      {refreshing && (
        <span className="muted" aria-hidden>
          refreshing…
        </span>
      )}
    </SearchBar>
  );
}
