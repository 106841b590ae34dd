// The run as a picture (plain SVG, no library): answers per second by status (stacked), p99
// latency per second, and intents open over time, on one time axis on which every injected fault
// is marked: kills and PostgreSQL restarts as lines, the outage as a band, busts and releases as
// ticks.
import { percentile } from "../../tools/stats";
import type { Fault, Intent, RequestSample, Seen } from "./record";

const SERIES: { name: string; color: string; test: (s: Seen) => boolean }[] = [
  { name: "200", color: "#2e7d32", test: (s) => s === 200 },
  { name: "409 in progress", color: "#f9a825", test: (s) => s === 409 },
  { name: "503 store down", color: "#6a1b9a", test: (s) => s === 503 },
  { name: "502/504 gateway", color: "#ef6c00", test: (s) => s === 502 || s === 504 },
  {
    name: "other 4xx",
    color: "#0277bd",
    test: (s) => typeof s === "number" && s >= 400 && s < 500 && s !== 409,
  },
  { name: "500", color: "#c62828", test: (s) => s === 500 },
  { name: "dropped by client", color: "#9e9e9e", test: (s) => s === "dropped" },
  { name: "connection error", color: "#424242", test: (s) => s === "error" },
];

const W = 960;
const LEFT = 60;
const RIGHT = 20;
const PLOT_W = W - LEFT - RIGHT;
const PANELS = [
  { top: 70, height: 170, title: "answers per second, by status" },
  { top: 270, height: 100, title: "p99 latency per second (ms)" },
  { top: 400, height: 100, title: "intents open" },
];
const H = 560;

export interface ChartInput {
  title: string;
  requests: RequestSample[];
  intents: Intent[];
  faults: Fault[];
  endMs: number;
}

export function renderChart(input: ChartInput): string {
  const seconds = Math.max(1, Math.ceil(input.endMs / 1000));
  const x = (ms: number) => LEFT + (ms / 1000 / seconds) * PLOT_W;
  const buckets = Array.from({ length: seconds }, () => ({
    counts: SERIES.map(() => 0),
    ms: [] as number[],
  }));
  for (const r of input.requests) {
    const b = buckets[Math.min(seconds - 1, Math.floor(r.t / 1000))]!;
    const k = SERIES.findIndex((s) => s.test(r.seen));
    if (k >= 0) b.counts[k]!++;
    if (typeof r.seen === "number") b.ms.push(r.ms);
  }
  const open = Array.from(
    { length: seconds },
    (_, s) =>
      input.intents.filter((i) => i.startedAt <= s * 1000 && (i.endedAt ?? Infinity) > s * 1000)
        .length,
  );
  const p99 = buckets.map((b) =>
    percentile(
      b.ms.sort((a, c) => a - c),
      99,
    ),
  );
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${LEFT}" y="18" font-size="14" font-weight="bold">${escape(input.title)}</text>`,
    legend(),
    stackedBars(
      buckets.map((b) => b.counts),
      x,
      PANELS[0]!,
    ),
    line(p99, x, PANELS[1]!, "#c62828"),
    line(open, x, PANELS[2]!, "#0277bd"),
    faultMarks(input.faults, x),
    timeAxis(seconds, x),
    "</svg>",
  ];
  return parts.join("\n");
}

function legend(): string {
  return SERIES.map((s, i) => {
    const lx = LEFT + i * 110;
    return `<rect x="${lx}" y="28" width="10" height="10" fill="${s.color}"/><text x="${lx + 14}" y="37">${escape(s.name)}</text>`;
  }).join("");
}

function frame(p: (typeof PANELS)[number], max: number): string {
  return [
    `<text x="${LEFT}" y="${p.top - 4}" font-weight="bold">${escape(p.title)}</text>`,
    `<line x1="${LEFT}" y1="${p.top + p.height}" x2="${W - RIGHT}" y2="${p.top + p.height}" stroke="#999"/>`,
    `<line x1="${LEFT}" y1="${p.top}" x2="${LEFT}" y2="${p.top + p.height}" stroke="#999"/>`,
    `<text x="${LEFT - 4}" y="${p.top + 8}" text-anchor="end">${Math.round(max)}</text>`,
    `<text x="${LEFT - 4}" y="${p.top + p.height}" text-anchor="end">0</text>`,
  ].join("");
}

function stackedBars(
  counts: number[][],
  x: (ms: number) => number,
  p: (typeof PANELS)[number],
): string {
  const max = Math.max(1, ...counts.map((c) => c.reduce((a, b) => a + b, 0)));
  const bw = Math.max(1, x(1000) - x(0));
  const out = [frame(p, max)];
  counts.forEach((c, s) => {
    let y = p.top + p.height;
    c.forEach((n, k) => {
      if (n === 0) return;
      const h = (n / max) * p.height;
      y -= h;
      out.push(
        `<rect x="${x(s * 1000).toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${SERIES[k]!.color}"/>`,
      );
    });
  });
  return out.join("");
}

/**
 * A line through the values; a second without a value (NaN: no numeric answer in it) is a gap, not
 * a point.
 */
function line(
  values: number[],
  x: (ms: number) => number,
  p: (typeof PANELS)[number],
  color: string,
): string {
  const max = Math.max(1, ...values.filter(Number.isFinite));
  const runs: string[][] = [[]];
  values.forEach((v, s) => {
    if (!Number.isFinite(v)) {
      if (runs.at(-1)!.length > 0) runs.push([]);
      return;
    }
    runs
      .at(-1)!
      .push(
        `${x(s * 1000 + 500).toFixed(1)},${(p.top + p.height - (v / max) * p.height).toFixed(1)}`,
      );
  });
  const drawn = runs
    .filter((r) => r.length > 0)
    .map((r) => {
      if (r.length > 1)
        return `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${r.join(" ")}"/>`;
      const [cx, cy] = r[0]!.split(",");
      return `<circle cx="${cx}" cy="${cy}" r="1.5" fill="${color}"/>`;
    });
  return frame(p, max) + drawn.join("");
}

function faultMarks(faults: Fault[], x: (ms: number) => number): string {
  const top = PANELS[0]!.top;
  const bottom = PANELS[2]!.top + PANELS[2]!.height;
  const out: string[] = [];
  const stop = faults.find((f) => f.kind === "pg-stop");
  const back = faults.find((f) => f.kind === "pg-start");
  if (stop) {
    const x1 = x(stop.t);
    const x2 = back ? x(back.t) : x1 + 2;
    out.push(
      `<rect x="${x1.toFixed(1)}" y="${top}" width="${(x2 - x1).toFixed(1)}" height="${bottom - top}" fill="#6a1b9a" opacity="0.12"/>`,
    );
    out.push(`<text x="${x1.toFixed(1)}" y="${bottom + 28}" fill="#6a1b9a">PG stopped</text>`);
  }
  let marks = 0;
  for (const f of faults) {
    const fx = x(f.t).toFixed(1);
    if (
      f.kind === "kill" ||
      f.kind === "pg-restart" ||
      f.kind === "provider-recovers" ||
      (f.kind === "db" && !f.detail.startsWith("healthy"))
    ) {
      const color =
        f.kind === "kill"
          ? "#c62828"
          : f.kind === "pg-restart" || f.kind === "db"
            ? "#6a1b9a"
            : "#2e7d32";
      const label =
        f.kind === "kill"
          ? f.detail.split(" ")[0]!
          : f.kind === "pg-restart"
            ? "PG restart"
            : f.kind === "db"
              ? f.detail.split(":")[0]!
              : "fire ends";
      out.push(
        `<line x1="${fx}" y1="${top}" x2="${fx}" y2="${bottom}" stroke="${color}" stroke-dasharray="4 3"/>`,
      );
      // Alternate two rows, so faults close in time (a kill and a restart) keep readable labels.
      out.push(
        `<text x="${fx}" y="${top - 14 - (marks++ % 2) * 11}" fill="${color}" text-anchor="middle">${escape(`✕ ${label}`)}</text>`,
      );
    } else if (f.kind === "bust" || f.kind === "release") {
      const color = f.kind === "bust" ? "#ef6c00" : "#0277bd";
      out.push(
        `<line x1="${fx}" y1="${bottom + 2}" x2="${fx}" y2="${bottom + 10}" stroke="${color}"/>`,
      );
    }
  }
  out.push(
    `<text x="${W - RIGHT}" y="${bottom + 28}" text-anchor="end"><tspan fill="#ef6c00">| bust</tspan>  <tspan fill="#0277bd">| release</tspan>  <tspan fill="#c62828">✕ instance SIGKILLed</tspan></text>`,
  );
  return out.join("");
}

function timeAxis(seconds: number, x: (ms: number) => number): string {
  const y = PANELS[2]!.top + PANELS[2]!.height;
  const step = seconds > 120 ? 30 : seconds > 40 ? 10 : 5;
  const ticks: string[] = [];
  for (let s = 0; s <= seconds; s += step)
    ticks.push(
      `<text x="${x(s * 1000).toFixed(1)}" y="${y + 20}" text-anchor="middle">${s}s</text>`,
    );
  return ticks.join("");
}

function escape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
