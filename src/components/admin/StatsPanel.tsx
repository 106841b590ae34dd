"use client";
// Counters per tenant and procedure (from every instance's flushes): every event the engine counts,
// the live counts, and the same counters per minute over the last 24 hours as a chart.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { QueryState, REFRESH_MS } from "./ui";
import { AlarmCount, FindingsAlarm } from "./alarms";
import { CounterChart } from "./CounterChart";
import { DataTable } from "../DataTable";

type Stats = RouterOutputs["admin"]["stats"];

export function StatsPanel() {
  const trpc = useTRPC();
  const stats = useQuery({ ...trpc.admin.stats.queryOptions(), refetchInterval: REFRESH_MS });
  const s = stats.data;
  return (
    <section aria-labelledby="stats-heading">
      <h2 id="stats-heading">Counters</h2>
      <QueryState isPending={stats.isPending} error={stats.error}>
        {s && (
          <>
            <ul className="row bare" aria-label="Live counts">
              <KeyCounts keys={s.keys} />
              <HealthCounts s={s} />
              <RefusalCounts refusals={s.refusals} />
            </ul>
            {s.replication.warning && (
              <p role="status" className={s.replication.alarm ? "alert bad" : "muted"}>
                {s.replication.warning}
              </p>
            )}
            {s.counters.length === 0 ? (
              <p className="muted">No requests counted yet.</p>
            ) : (
              <CountersTable events={s.events} counters={s.counters} />
            )}
            <CounterChart pairs={s.counters.map(chartPair)} />
          </>
        )}
      </QueryState>
    </section>
  );
}

const STATUS_COUNTS = ["PROCESSING", "COMPLETED", "FAILED"] as const;

function KeyCounts({ keys }: { keys: Stats["keys"] }) {
  return (
    <>
      {STATUS_COUNTS.map((status) => (
        <li key={status} className="card">
          {status[0] + status.slice(1).toLowerCase()}{" "}
          <strong>
            {/* Past a million keys the finished counts are the planner's estimates (key-gauges.ts). */}
            {keys.estimated && status !== "PROCESSING" ? "≈ " : ""}
            {keys.byStatus[status]}
          </strong>
        </li>
      ))}
      <AlarmCount alarm={keys.stuck > 0}>
        Stuck leases <strong>{keys.stuck}</strong>
      </AlarmCount>
    </>
  );
}

/** The outbox, reconciliation, replication and retention at a glance. */
function HealthCounts({ s }: { s: Stats }) {
  const { replication, reaper } = s;
  return (
    <>
      <li className="card">
        <Link href="/admin/outbox">Outbox</Link> pending <strong>{s.outbox.PENDING}</strong>, dead{" "}
        <strong>{s.outbox.DEAD}</strong>
      </li>
      <FindingsAlarm byKind={s.openFindingsByKind} />
      <AlarmCount alarm={replication.alarm} title={replication.warning ?? undefined}>
        Commits{" "}
        <strong>
          {replication.mode === "synchronous"
            ? "synchronously replicated"
            : replication.mode.replaceAll("_", " ")}
        </strong>
      </AlarmCount>
      <AlarmCount alarm={reaper.behind}>
        Reaper lag <strong>{reaper.lagSeconds} s</strong>
        {reaper.behind && (
          <>
            {" "}
            — behind retention (warning above {reaper.warnAboveSeconds} s): the key table is growing
          </>
        )}
      </AlarmCount>
    </>
  );
}

type Refusal = Stats["refusals"][number];

/** Where in a request's path it was refused, in words. */
const REFUSAL_STAGE: Record<Refusal["stage"], string> = {
  admission: "at admission",
  queue: "after waiting in line",
  connection: "per peer address",
  lane: "in its route's lane",
  store: "at the store",
  body: "while reading the body",
};

/** "store busy at admission"; the stage left out where the reason names it ("store unavailable"). */
const refusalLabel = ({ stage, reason }: Refusal) =>
  reason.startsWith(`${stage}_`)
    ? reason.replaceAll("_", " ")
    : `${reason.replaceAll("_", " ")} ${REFUSAL_STAGE[stage]}`;

/**
 * Requests this instance answered without their work (503 store_busy, 408, 413…), by stage and
 * reason: a client asked to come back is a sign of an instance at its limit.
 */
function RefusalCounts({ refusals }: { refusals: Stats["refusals"] }) {
  const total = refusals.reduce((n, r) => n + r.count, 0);
  return (
    <li className="card" aria-label="Refusals on this instance">
      Refused here <strong>{total}</strong>
      {refusals.length > 0 &&
        ` (${refusals.map((r) => `${refusalLabel(r)}: ${r.count}`).join(", ")})`}
    </li>
  );
}

function CountersTable({ events, counters }: Pick<Stats, "events" | "counters">) {
  return (
    <DataTable
      label="Counters per tenant and procedure"
      columns={["Tenant", "Procedure", ...events.map((e) => e.replaceAll("_", " "))]}
    >
      {counters.map((c) => (
        <tr key={`${c.tenant}/${c.procedure}`}>
          <td>{c.tenant}</td>
          <td className="mono">{c.procedure}</td>
          {events.map((e) => (
            <td key={e}>{c.counts[e]}</td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}

/** A tenant and procedure for the chart's choice, with its volume of every event counted. */
function chartPair(c: Stats["counters"][number]) {
  return {
    tenant: c.tenant,
    procedure: c.procedure,
    volume: Object.values(c.counts).reduce((a, b) => a + b, 0),
  };
}
