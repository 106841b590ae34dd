// The cells of a table of idempotency keys, one row per key; a view picks its columns (the keys
// list shows more than the search). A key's value links to its page.
import Link from "next/link";
import type { KeySummary } from "@/server/api/routers/admin/view";
import type { Cells } from "../DataTable";
import { formatTime, LeaseBadge, StatusBadge } from "./ui";

export const KEY_CELLS = {
  Key: (k) => (
    <Link className="mono" href={`/admin/keys/${k.id}`}>
      {k.key}
    </Link>
  ),
  Status: (k) => <StatusBadge status={k.status} />,
  Tenant: (k) => k.tenant,
  Procedure: (k) => <span className="mono">{k.procedure}</span>,
  Attempts: (k) => k.attempts,
  Lease: (k) => <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />,
  Created: (k) => formatTime(k.createdAt),
  Expires: (k) => formatTime(k.expiresAt),
} satisfies Cells<KeySummary>;
