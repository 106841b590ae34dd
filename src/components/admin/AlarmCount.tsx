// A live count on the dashboard's first row that turns red while its alarm holds (stuck leases,
// replication, the reaper's lag, open reconciliation findings).
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
    <li
      className={`card${alarm ? " alert bad" : ""}`}
      style={{ margin: 0 }}
      title={title}
      aria-label={label}
    >
      {children}
    </li>
  );
}
