"use client";
// Counters over time: the last 24 h in quarter-hours (summed from the per-minute counts), one line
// per event, for one tenant and one procedure or every procedure of the tenant. Plain SVG: 96
// points a line stay readable lines at any volume (1 440 minutes on 700 pixels were a solid band).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { CHART_EVENTS, type ChartEvent } from "@/shared/chart-events";
import { useTRPC } from "@/trpc/react";
import { bucketed, chartChoices, type ChartPair } from "./chart-buckets";
import { QueryState, REFRESH_MS } from "./ui";
import { Options } from "../Options";

/** Minutes per point. */
const BUCKET = 15;

/** Colours and dashes: the lines stay apart for a reader who cannot tell the colours apart. */
const STYLE: Record<ChartEvent, { color: string; dash?: string }> = {
  executed: { color: "#1f5fbf" },
  replayed: { color: "#1d7a3a", dash: "6 3" },
  conflicts: { color: "#9a5b00", dash: "2 2" },
  mismatches: { color: "#7b3fb0", dash: "8 2 2 2" },
  store_errors: { color: "#b3261e" },
};

const W = 720;
const H = 180;
const PAD = { left: 36, bottom: 20, top: 8 };

function Lines({
  series,
  minutes,
  max,
}: {
  series: Record<ChartEvent, number[]>;
  minutes: number;
  max: number;
}) {
  const x = (i: number) => PAD.left + (i / (minutes - 1)) * (W - PAD.left - 4);
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.bottom - PAD.top);
  return (
    <>
      {CHART_EVENTS.map((e) => (
        <polyline
          key={e}
          data-event={e}
          fill="none"
          stroke={STYLE[e].color}
          strokeDasharray={STYLE[e].dash}
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
      <h3 id="chart-heading" style={{ marginTop: 0, fontSize: "1rem" }}>
        Per {BUCKET} minutes, last 24 hours
      </h3>
      <label>
        Chart of{" "}
        <select
          value={chosen.value}
          onChange={(e) => setPick(e.target.value)}
          style={{ maxWidth: "100%" }}
        >
          <Options of={choices} />
        </select>
      </label>
      <Chart input={chosen.input} />
    </section>
  );
}

/** The chosen pair's counts of the last 24 hours, summed per bucket, and its highest bucket. */
function useSeries(input: { tenant: string; procedure?: string }) {
  const trpc = useTRPC();
  const data = useQuery({
    ...trpc.admin.counters.series.queryOptions(input),
    refetchInterval: REFRESH_MS * 15,
  });
  const d = data.data;
  const series = d
    ? (Object.fromEntries(CHART_EVENTS.map((e) => [e, bucketed(d.series[e], BUCKET)])) as Record<
        ChartEvent,
        number[]
      >)
    : undefined;
  const max = series ? Math.max(1, ...CHART_EVENTS.flatMap((e) => series[e])) : 1;
  return { data, series, max };
}

function Chart({ input }: { input: { tenant: string; procedure?: string } }) {
  const { data, series, max } = useSeries(input);
  const d = data.data;
  const summary = d
    ? CHART_EVENTS.map((e) => `${e.replace("_", " ")} ${d.totals[e]}`).join(", ")
    : "";
  return (
    <QueryState isPending={data.isPending} error={data.error}>
      {d && series && (
        <>
          <svg
            viewBox={`0 0 ${W} ${H}`}
            role="img"
            aria-label={`Counts per ${BUCKET} minutes over the last 24 hours: ${summary}`}
            style={{ width: "100%", height: "auto", display: "block", marginTop: "0.5rem" }}
          >
            <Axes max={max} />
            <Lines series={series} minutes={series.executed.length} max={max} />
          </svg>
          <Legend totals={d.totals} />
        </>
      )}
    </QueryState>
  );
}

/** Each line's colour and dash beside its event's total. */
function Legend({ totals }: { totals: Record<ChartEvent, number> }) {
  return (
    <ul
      aria-label="Totals over the last 24 hours"
      className="row"
      style={{
        listStyle: "none",
        padding: 0,
        margin: "0.5rem 0 0",
        flexWrap: "wrap",
        columnGap: "1rem",
        rowGap: "0.25rem",
      }}
    >
      {CHART_EVENTS.map((e) => (
        <li key={e} className="row" style={{ gap: "0.3rem" }}>
          <svg width={22} height={8} aria-hidden>
            <line
              x1={0}
              x2={22}
              y1={4}
              y2={4}
              stroke={STYLE[e].color}
              strokeDasharray={STYLE[e].dash}
              strokeWidth={2}
            />
          </svg>
          {e.replace("_", " ")} <strong>{totals[e]}</strong>
        </li>
      ))}
    </ul>
  );
}
