// Facts as term and value pairs (a key, an order), laid out by the `.facts` grid; a value set as
// code is in monospace.
import { Fragment, type ReactNode } from "react";

export function Facts({
  of,
  className = "",
  mutedTerms = false,
}: {
  of: [term: string, value: ReactNode][];
  className?: string;
  mutedTerms?: boolean;
}) {
  return (
    <dl className={`facts ${className}`}>
      {of.map(([term, value]) => (
        <Fragment key={term}>
          <dt className={mutedTerms ? "muted" : undefined}>{term}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}
