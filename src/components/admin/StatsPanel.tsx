"use client";
// Counters per tenant and procedure (from every instance's flushes): every event the engine counts,
// the live counts, and the same counters per minute over the last 24 hours as a chart.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import { QueryState, REFRESH_MS } from "./ui";
import { CounterChart } from "./CounterChart";
import { ColumnHeads } from "../ColumnHeads";

export function StatsPanel() {
  const trpc = useTRPC();
  const stats = useQuery({ ...trpc.admin.stats.queryOptions(), refetchInterval: REFRESH_MS });
  const s = stats.data;
  // Past a million keys the finished counts are the planner's estimates
  // (server/admin/key-gauges.ts).
  const approx = s?.keys.estimated ? "≈ " : "";
  return (
    <section aria-labelledby="stats-heading">
      <h2 id="stats-heading">Counters</h2>
      <QueryState isPending={stats.isPending} error={stats.error}>
        {s && (
          <>
            <ul className="row" aria-label="Live counts" style={{ listStyle: "none", padding: 0 }}>
              <li className="card">
                Processing <strong>{s.keys.byStatus.PROCESSING}</strong>
              </li>
              <li className="card">
                Completed{" "}
                <strong>
                  {approx}
                  {s.keys.byStatus.COMPLETED}
                </strong>
              </li>
              <li className="card">
                Failed{" "}
                <strong>
                  {approx}
                  {s.keys.byStatus.FAILED}
                </strong>
              </li>
              <li className={`card${s.keys.stuck ? " alert bad" : ""}`} style={{ margin: 0 }}>
                Stuck leases <strong>{s.keys.stuck}</strong>
              </li>
              <li className="card">
                <Link href="/admin/outbox">Outbox</Link> pending <strong>{s.outbox.PENDING}</strong>
                , dead <strong>{s.outbox.DEAD}</strong>
              </li>
              <li className="card">
                Open findings <strong>{s.openFindings}</strong>
              </li>
              <li
                className={`card${s.replication.alarm ? " alert bad" : ""}`}
                style={{ margin: 0 }}
                title={s.replication.warning ?? undefined}
              >
                Commits{" "}
                <strong>
                  {s.replication.mode === "synchronous"
                    ? "synchronously replicated"
                    : s.replication.mode.replaceAll("_", " ")}
                </strong>
              </li>
              <li className={`card${s.reaper.behind ? " alert bad" : ""}`} style={{ margin: 0 }}>
                Reaper lag <strong>{s.reaper.lagSeconds} s</strong>
                {s.reaper.behind && (
                  <>
                    {" "}
                    — behind retention (warning above {s.reaper.warnAboveSeconds} s): the key table
                    is growing
                  </>
                )}
              </li>
            </ul>
            {s.replication.warning && (
              <p role="status" className={s.replication.alarm ? "alert bad" : "muted"}>
                {s.replication.warning}
              </p>
            )}
            {s.counters.length === 0 ? (
              <p className="muted">No requests counted yet.</p>
            ) : (
              <div style={{ overflowX: "auto" }}>
                <table aria-label="Counters per tenant and procedure">
                  <ColumnHeads
                    labels={["Tenant", "Procedure", ...s.events.map((e) => e.replaceAll("_", " "))]}
                  />
                  <tbody>
                    {s.counters.map((c) => (
                      <tr key={`${c.tenant}/${c.procedure}`}>
                        <td>{c.tenant}</td>
                        <td className="mono">{c.procedure}</td>
                        {s.events.map((e) => (
                          <td key={e}>{c.counts[e]}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <CounterChart
              pairs={s.counters.map((c) => ({
                tenant: c.tenant,
                procedure: c.procedure,
                volume: Object.values(c.counts).reduce((a, b) => a + b, 0),
              }))}
            />
          </>
        )}
      </QueryState>
    </section>
  );
}
