"use client";
// Counters over time: the last 24 h in quarter-hours (summed from the per-minute counts), one line
// per event, for one tenant and one procedure or every procedure of the tenant. Plain SVG: 96
// points a line stay readable lines at any volume (1 440 minutes on 700 pixels were a solid band).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { CHART_EVENTS, type ChartEvent } from "@/shared/chart-events";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { bucketed, chartChoices, type ChartPair } from "./chart-buckets";
import { QueryState, REFRESH_MS } from "./ui";
import { Options } from "../Options";

/** Minutes per point. */
const BUCKET = 15;

/** Colours and dashes: the lines stay apart for a reader who cannot tell the colours apart. */
const STROKE: Record<ChartEvent, { stroke: string; strokeDasharray?: string }> = {
  executed: { stroke: "#1f5fbf" },
  replayed: { stroke: "#1d7a3a", strokeDasharray: "6 3" },
  conflicts: { stroke: "#9a5b00", strokeDasharray: "2 2" },
  mismatches: { stroke: "#7b3fb0", strokeDasharray: "8 2 2 2" },
  store_errors: { stroke: "#b3261e" },
};

const W = 720;
const H = 180;
const PAD = { left: 36, bottom: 20, top: 8 };

function Lines({ series, max }: { series: Record<ChartEvent, number[]>; max: number }) {
  const x = (i: number) => PAD.left + (i / (series.executed.length - 1)) * (W - PAD.left - 4);
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.bottom - PAD.top);
  return (
    <>
      {CHART_EVENTS.map((e) => (
        <polyline
          key={e}
          data-event={e}
          fill="none"
          {...STROKE[e]}
          strokeWidth={1.5}
          points={series[e].map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ")}
        />
      ))}
    </>
  );
}

function Axes({ max }: { max: number }) {
  // The ends are anchored inward, so "−24 h" and "now" are not cut off at the edges.
  const anchor = (h: number) => (h === 24 ? "start" : h === 0 ? "end" : "middle");
  const hours = [24, 18, 12, 6, 0];
  return (
    <g fontSize={10} fill="#5b6470">
      <line x1={PAD.left} x2={W} y1={H - PAD.bottom} y2={H - PAD.bottom} stroke="#dcdfe3" />
      <text x={PAD.left - 4} y={PAD.top + 8} textAnchor="end">
        {max}
      </text>
      <text x={PAD.left - 4} y={H - PAD.bottom} textAnchor="end">
        0
      </text>
      {hours.map((h) => (
        <text
          key={h}
          x={PAD.left + ((24 - h) / 24) * (W - PAD.left - 4)}
          y={H - 4}
          textAnchor={anchor(h)}
        >
          {h === 0 ? "now" : `−${h} h`}
        </text>
      ))}
    </g>
  );
}

export function CounterChart({ pairs }: { pairs: ChartPair[] }) {
  const choices = chartChoices(pairs);
  const [pick, setPick] = useState("");
  const chosen = choices.find((c) => c.value === pick) ?? choices[0];
  if (!chosen) return null;
  return (
    <section aria-labelledby="chart-heading" className="card" style={{ marginTop: "1rem" }}>
      <h3 id="chart-heading">Per {BUCKET} minutes, last 24 hours</h3>
      <label>
        Chart of{" "}
        <select value={chosen.value} onChange={(e) => setPick(e.target.value)}>
          <Options of={choices} />
        </select>
      </label>
      <Chart input={chosen.input} />
    </section>
  );
}

function Chart({ input }: { input: { tenant: string; procedure?: string } }) {
  const trpc = useTRPC();
  const data = useQuery({
    ...trpc.admin.counters.series.queryOptions(input),
    refetchInterval: REFRESH_MS * 15,
  });
  return (
    <QueryState isPending={data.isPending} error={data.error}>
      {data.data && <Plot {...data.data} />}
    </QueryState>
  );
}

/** The chosen pair's counts of the last 24 hours, summed per bucket, up to its highest bucket. */
function Plot({ series, totals }: RouterOutputs["admin"]["counters"]["series"]) {
  const buckets = Object.fromEntries(
    CHART_EVENTS.map((e) => [e, bucketed(series[e], BUCKET)]),
  ) as Record<ChartEvent, number[]>;
  const max = Math.max(1, ...Object.values(buckets).flat());
  const summary = CHART_EVENTS.map((e) => `${e.replace("_", " ")} ${totals[e]}`).join(", ");
  return (
    <>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Counts per ${BUCKET} minutes over the last 24 hours: ${summary}`}
        className="chart"
      >
        <Axes max={max} />
        <Lines series={buckets} max={max} />
      </svg>
      <Legend totals={totals} />
    </>
  );
}

/** Each line's colour and dash beside its event's total. */
function Legend({ totals }: { totals: Record<ChartEvent, number> }) {
  return (
    <ul aria-label="Totals over the last 24 hours" className="row bare legend">
      {CHART_EVENTS.map((e) => (
        <li key={e} className="row">
          <svg width={22} height={8} aria-hidden>
            <line x1={0} x2={22} y1={4} y2={4} strokeWidth={2} {...STROKE[e]} />
          </svg>
          {e.replace("_", " ")} <strong>{totals[e]}</strong>
        </li>
      ))}
    </ul>
  );
}
