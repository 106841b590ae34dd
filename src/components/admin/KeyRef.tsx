"use client";
// /admin/keys/<ref>: a row id (the dashboard's links) or a key's value (what an operator pastes
// from a log line), with ?tenant= to choose one tenant. One match opens the key; a value several
// tenants used lists them; a value with no row now shows its bust or release from the audit log.
import Link from "next/link";
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import type { KeySummary } from "@/server/api/routers/admin/view";
import { useTRPC } from "@/trpc/react";
import { KeyDetail, KeyHeading } from "./KeyDetail";
import { KEY_CELLS } from "./key-cells";
import { QueryState } from "./ui";
import { CellTable, type Cells } from "../DataTable";

/** What the reference names, and the one key it settled on, if it did. */
function useKeyRef(value: string, tenant: string | undefined) {
  const trpc = useTRPC();
  const found = useQuery({
    ...trpc.admin.keys.resolve.queryOptions({ ref: value, ...(tenant ? { tenant } : {}) }),
    retry: false,
  });
  const items = found.data?.items ?? [];
  const removed = found.data?.removed ?? [];
  // The key this page settled on stays on screen, even once a bust here removes it (its feedback
  // and audit trail are on the detail), whatever a later lookup answers.
  const [pin, setPin] = useState<{ ref: string; id: string }>();
  const pinned = pin?.ref === `${tenant ?? ""}/${value}` ? pin.id : undefined;
  // A removed key's own id: its detail page shows the audit trail and timeline.
  const single =
    items.length === 1
      ? items[0]!.id
      : found.data && items.length === 0
        ? removed[0]?.targetId
        : undefined;
  if (!pinned && single) setPin({ ref: `${tenant ?? ""}/${value}`, id: single });
  return { found, items, id: pinned ?? single };
}

export function KeyRef({ value, tenant }: { value: string; tenant?: string }) {
  const { found, items, id } = useKeyRef(value, tenant);
  if (id) return <KeyDetail id={id} />;
  return (
    <>
      <KeyHeading name={value} />
      <QueryState isPending={found.isPending} error={found.error}>
        {items.length === 0 ? (
          <div role="alert" className="alert warn">
            No idempotency key has the id or the value <span className="mono">{value}</span>
            {tenant ? ` in tenant ${tenant}` : ""}, and the audit log has no bust or release of it.
            It may have expired and been reaped.
          </div>
        ) : (
          <TenantChoice items={items} />
        )}
      </QueryState>
    </>
  );
}

const { Status, Procedure, Created } = KEY_CELLS;
const CHOICE_CELLS: Cells<KeySummary> = {
  Tenant: (k) => <Link href={`/admin/keys/${k.id}`}>{k.tenant}</Link>,
  Status,
  Procedure,
  Created,
};

/** One key value used by several tenants: the operator picks the tenant. */
function TenantChoice({ items }: { items: KeySummary[] }) {
  return (
    <>
      <p>{items.length} tenants used this key value: choose one.</p>
      <CellTable label="Keys with this value" cells={CHOICE_CELLS} rows={items} />
    </>
  );
}
