"use client";
// What the reconciliation job found: duplicate charges, charges without an order, and so on; an
// open finding resolved with a note saying what was done (audited). One found again is open again.
// Each finding's details read as one sentence (finding-text.ts) and charge ids wrap, so the table
// fits a 1 300 px screen with its Resolve column in view (e2e/admin-findings.spec.ts).
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatTime, Pager, QueryState, REFRESH_MS, useCursorStack } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { CellTable, type Cells } from "../DataTable";
import { describeFinding } from "./finding-text";

type Finding = RouterOutputs["admin"]["reconciliation"]["list"]["items"][number];

export function ReconciliationPanel() {
  const trpc = useTRPC();
  const pages = useCursorStack();
  const findings = useQuery({
    ...trpc.admin.reconciliation.list.queryOptions(pages.input),
    refetchInterval: REFRESH_MS,
  });
  return (
    <section aria-labelledby="recon-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="recon-heading">Reconciliation findings</h2>
      <QueryState isPending={findings.isPending} error={findings.error}>
        {findings.data?.items.length === 0 ? (
          <p className="muted">No findings: every charge matches an order.</p>
        ) : (
          <CellTable
            label="Reconciliation findings"
            cells={FINDING_CELLS}
            rows={findings.data?.items ?? []}
          />
        )}
        <Pager pages={pages} nextCursor={findings.data?.nextCursor} label="Findings" />
      </QueryState>
    </section>
  );
}

const FINDING_CELLS: Cells<Finding> = {
  Found: (f) => formatTime(f.createdAt),
  Kind: (f) => <span className="badge bad">{f.kind}</span>,
  Order: (f) => <span className="mono">{f.orderId?.slice(0, 8) ?? "–"}</span>,
  Charges: (f) =>
    f.chargeIds.length === 0
      ? "–"
      : f.chargeIds.map((id) => (
          <span key={id} className="mono break-anywhere" style={{ display: "block" }}>
            {id}
          </span>
        )),
  Details: (f) => <div style={{ minWidth: "16rem" }}>{describeFinding(f.kind, f.details)}</div>,
  Resolved: (f) =>
    f.resolvedAt ? (
      `${formatTime(f.resolvedAt)} by ${f.resolvedBy ?? "–"}: ${f.resolution ?? "–"}`
    ) : (
      <ReasonActionForm
        button="Resolve"
        done="Resolved"
        send={(client, note, context) =>
          client.admin.reconciliation.resolve.mutate({ id: f.id, note }, { context })
        }
      />
    ),
};
