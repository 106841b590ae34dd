// The dashboard's live counts that turn red while their alarm holds (stuck leases, replication,
// the reaper's lag, open reconciliation findings). Open findings are an alarm, not a plain count:
// each is money and an order that disagree (a customer charged without an order, or twice), so
// the card is red while any is open, says which kinds, and leads to the findings to resolve.
import Link from "next/link";
import type { ReactNode } from "react";

export function AlarmCount({
  alarm,
  title,
  label,
  children,
}: {
  alarm: boolean;
  title?: string;
  /** The card's accessible name, when its text alone does not say what it is. */
  label?: string;
  children: ReactNode;
}) {
  return (
    <li className={alarm ? "card alert bad" : "card"} title={title} aria-label={label}>
      {children}
    </li>
  );
}

/** "charge without order 2, duplicate charge 1": the open kinds, most first. */
export function openKinds(byKind: Record<string, number>): string {
  return Object.entries(byKind)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind.replaceAll("_", " ").toLowerCase()} ${n}`)
    .join(", ");
}

export function FindingsAlarm({ byKind }: { byKind: Record<string, number> }) {
  const open = Object.values(byKind).reduce((a, b) => a + b, 0);
  return (
    <AlarmCount
      alarm={open > 0}
      label="Open reconciliation findings"
      title={
        open > 0 ? "The provider's books and the orders disagree: resolve each finding" : undefined
      }
    >
      <Link href="/admin/outbox#recon-heading">Open findings</Link> <strong>{open}</strong>
      {open > 0 && <> — {openKinds(byKind)}: the books disagree, resolve each finding</>}
    </AlarmCount>
  );
}
