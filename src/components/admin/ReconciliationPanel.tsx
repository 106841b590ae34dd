"use client";
// What the reconciliation job found: duplicate charges, charges without an order, and so on; an
// open finding resolved with a note saying what was done (audited). One found again is open again.
// Each finding's details read as one sentence (finding-text.ts) and charge ids wrap, so the table
// fits a 1 300 px screen with its Resolve column in view (e2e/admin-findings.spec.ts).
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatTime, Pager, QueryState, REFRESH_MS, useCursorStack } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { DataTable } from "../DataTable";
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
          <DataTable
            label="Reconciliation findings"
            columns={["Found", "Kind", "Order", "Charges", "Details", "Resolved"]}
            scroll
          >
            {findings.data?.items.map((f) => (
              <FindingRow key={f.id} f={f} />
            ))}
          </DataTable>
        )}
        <Pager pages={pages} nextCursor={findings.data?.nextCursor} label="Findings" />
      </QueryState>
    </section>
  );
}

function FindingRow({ f }: { f: Finding }) {
  return (
    <tr>
      <td>{formatTime(f.createdAt)}</td>
      <td>
        <span className="badge bad">{f.kind}</span>
      </td>
      <td className="mono">{f.orderId?.slice(0, 8) ?? "–"}</td>
      <td className="mono break-anywhere">
        {f.chargeIds.length === 0
          ? "–"
          : f.chargeIds.map((id) => (
              <span key={id} style={{ display: "block" }}>
                {id}
              </span>
            ))}
      </td>
      <td style={{ minWidth: "16rem" }}>{describeFinding(f.kind, f.details)}</td>
      <td>
        {f.resolvedAt ? (
          <>
            {formatTime(f.resolvedAt)} by {f.resolvedBy ?? "–"}: {f.resolution ?? "–"}
          </>
        ) : (
          <ReasonActionForm
            button="Resolve"
            done="Resolved"
            send={(client, note, context) =>
              client.admin.reconciliation.resolve.mutate({ id: f.id, note }, { context })
            }
          />
        )}
      </td>
    </tr>
  );
}
