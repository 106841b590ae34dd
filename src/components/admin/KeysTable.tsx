// Idempotency keys as a table, one row per key, in the columns a view chooses (the keys list
// shows more than the search); a key's value links to its page.
import Link from "next/link";
import { Fragment, type ReactNode } from "react";
import type { KeySummary } from "@/server/api/routers/admin/view";
import { DataTable } from "../DataTable";
import { formatTime, LeaseBadge, StatusBadge } from "./ui";

const CELLS = {
  Key: (k) => (
    <td className="mono">
      <Link href={`/admin/keys/${k.id}`}>{k.key}</Link>
    </td>
  ),
  Status: (k) => (
    <td>
      <StatusBadge status={k.status} />
    </td>
  ),
  Tenant: (k) => <td>{k.tenant}</td>,
  Procedure: (k) => <td className="mono">{k.procedure}</td>,
  Attempts: (k) => <td>{k.attempts}</td>,
  Lease: (k) => (
    <td>
      <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />
    </td>
  ),
  Created: (k) => <td>{formatTime(k.createdAt)}</td>,
  Expires: (k) => <td>{formatTime(k.expiresAt)}</td>,
} satisfies Record<string, (k: KeySummary) => ReactNode>;

export type KeyColumn = keyof typeof CELLS;

export function KeysTable({
  label,
  columns,
  keys,
  scroll,
}: {
  label: string;
  columns: readonly KeyColumn[];
  keys: KeySummary[];
  scroll?: boolean;
}) {
  return (
    <DataTable label={label} columns={columns} scroll={scroll}>
      {keys.map((k) => (
        <tr key={k.id}>
          {columns.map((column) => (
            <Fragment key={column}>{CELLS[column](k)}</Fragment>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}
