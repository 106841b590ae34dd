// The HTTP bench's tables: every figure beside its ratio to the control (the same checkout with no
// idempotency engine) measured in the same interleaved run, and its goals checked on them.
import { figuresOf, type Figures, type Slice } from "./load";
import { SCENARIOS, type Scenario } from "./scenarios";
import type { PaymentsReport } from "./payments";

export type Cells = Map<number, Map<Scenario, Slice>>;

const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "–");
const f3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : "–");

function ratios(x: Figures, c: Figures): string {
  return `${f2(x.p50 / c.p50)} / ${f2(x.p99 / c.p99)} / ${f2(x.perSecond / c.perSecond)} / ${f2(x.cpuMsPerRequest / c.cpuMsPerRequest)} / ${f2(x.dbCpuMsPerRequest / c.dbCpuMsPerRequest)}`;
}

export function checkoutTable(cells: Cells): string {
  const lines = [
    "| conns | path | p50 ms | p99 ms | served/s | server CPU ms/req | PostgreSQL CPU ms/req | non-2xx (by status) | unexpected | ratio to control: p50 / p99 / served/s / server CPU / PG CPU | ratio to floor: p50 / p99 / served/s / server CPU / PG CPU |",
    "|---:|---|---:|---:|---:|---:|---:|---|---:|---|---|",
  ];
  for (const [connections, row] of cells) {
    const control = figuresOf(row.get("control")!);
    const floor = row.get("floor") ? figuresOf(row.get("floor")!) : undefined;
    for (const scenario of SCENARIOS) {
      const slice = row.get(scenario);
      if (!slice) continue;
      const x = figuresOf(slice);
      lines.push(
        `| ${connections} | ${scenario} | ${f3(x.p50)} | ${f3(x.p99)} | ${x.perSecond.toFixed(0)} | ${f3(x.cpuMsPerRequest)} | ${f3(x.dbCpuMsPerRequest)} | ${x.non2xx} | ${x.errors} | ${ratios(x, control)} | ${floor ? ratios(x, floor) : "–"} |`,
      );
    }
  }
  return lines.join("\n");
}

export function instancesTable(rows: Map<number, Slice>, connections: number): string {
  const lines = [
    `| instances | p50 ms | p99 ms | served/s | CPU ms/req (all instances) | PostgreSQL CPU ms/req | non-2xx (by status) | unexpected | served/s ratio to one instance |`,
    "|---:|---:|---:|---:|---:|---:|---|---:|---:|",
  ];
  const one = figuresOf(rows.get(1)!);
  for (const [n, slice] of rows) {
    const x = figuresOf(slice);
    lines.push(
      `| ${n} | ${f3(x.p50)} | ${f3(x.p99)} | ${x.perSecond.toFixed(0)} | ${f3(x.cpuMsPerRequest)} | ${f3(x.dbCpuMsPerRequest)} | ${x.non2xx} | ${x.errors} | ${f2(x.perSecond / one.perSecond)} |`,
    );
  }
  return `protected new keys, ${connections} connections, round-robin over the instances' ports\n\n${lines.join("\n")}`;
}

interface Goal {
  goal: string;
  measured: string;
  met: boolean;
}

/** One cell's figures, if the run measured that path at that many connections. */
type FiguresAt = (connections: number, scenario: Scenario) => Figures | undefined;

/** The engine against the control: throughput at 64 connections, latency at 1, the replays. */
function controlGoals(at: FiguresAt): Goal[] {
  const out: Goal[] = [];
  const c64 = at(64, "control");
  const n64 = at(64, "new keys");
  const r64 = at(64, "replays");
  if (c64 && n64)
    out.push({
      goal: "64 conns: protected throughput ≥ 0.9× control",
      measured: `${f2(n64.perSecond / c64.perSecond)}×`,
      met: n64.perSecond >= 0.9 * c64.perSecond,
    });
  const c1 = at(1, "control");
  const n1 = at(1, "new keys");
  if (c1 && n1) {
    const overhead = n1.p50 - c1.p50;
    const signed = `${overhead >= 0 ? "+" : "−"}${f3(Math.abs(overhead))} ms`;
    out.push({
      goal: "1 conn: p50 overhead ≤ 0.5 ms",
      measured: `${signed} (${f3(n1.p50)} vs ${f3(c1.p50)})`,
      met: overhead <= 0.5,
    });
    out.push({
      goal: "1 conn: checkout p50 ≤ 4 ms with jobs running",
      measured: `${f3(n1.p50)} ms`,
      met: n1.p50 <= 4,
    });
  }
  if (c64 && r64)
    out.push({
      goal: "64 conns: replays ≥ 1.5× control throughput",
      measured: `${f2(r64.perSecond / c64.perSecond)}×`,
      met: r64.perSecond >= 1.5 * c64.perSecond,
    });
  return out;
}

/** A protected checkout's server CPU against a replay's, from the route costs (if measured). */
function checkoutCpuGoal(checkout?: { newKey: number; replay: number }): Goal[] {
  if (!checkout) return [];
  return [
    {
      goal: "server CPU per protected checkout ≤ 2.5× a replay's (route costs, 8 conns)",
      measured: `${f2(checkout.newKey / checkout.replay)}× (${f3(checkout.newKey)} vs ${f3(checkout.replay)} ms)`,
      met: checkout.newKey <= 2.5 * checkout.replay,
    },
  ];
}

/** This build against the --baseline build, each on its own instance (only with --baseline). */
function baselineGoal(at: FiguresAt): Goal[] {
  const b64 = at(64, "baseline");
  const p64 = at(64, "paired");
  if (!b64 || !p64) return [];
  return [
    {
      goal: "64 conns: protected checkouts/s ≥ 3× the baseline build's, same run (each on an instance started and warmed alike)",
      measured: `${f2(p64.perSecond / b64.perSecond)}× (${p64.perSecond.toFixed(0)} vs ${b64.perSecond.toFixed(0)} served/s)`,
      met: p64.perSecond >= 3 * b64.perSecond,
    },
  ];
}

/** Protected against control at every connection count the table has. */
function perConnectionGoals(at: FiguresAt): Goal[] {
  const out: Goal[] = [];
  for (const c of [1, 16, 64, 256]) {
    const control = at(c, "control");
    const protectedKeys = at(c, "new keys");
    if (control && protectedKeys)
      out.push({
        goal: `${c} conns: protected ≥ 0.95× control (served/s)`,
        measured: `${f2(protectedKeys.perSecond / control.perSecond)}×`,
        met: protectedKeys.perSecond >= 0.95 * control.perSecond,
      });
  }
  return out;
}

/** Unexpected answers and socket errors below 256 connections, where none is acceptable. */
function errorsGoal(cells: Cells): Goal {
  const below256 = [...cells.entries()]
    .filter(([c]) => c < 256)
    .flatMap(([, row]) => [...row.values()].map((s) => figuresOf(s).errors));
  const errors = below256.reduce((a, b) => a + b, 0);
  return {
    goal: "no errors below 256 connections",
    measured: `${errors} unexpected answers or socket errors`,
    met: errors === 0,
  };
}

/**
 * The worker keeps up when what is left as the checkouts stop is no more than their last second
 * brought: delivered ÷ created over a phase of tens of seconds stays a little under 1 even then
 * (the last payments are on their way).
 */
function paymentsGoal(payments: PaymentsReport): Goal {
  const createdPerSecond = payments.created / payments.checkoutSeconds;
  return {
    goal: "payments keep up: the backlog as checkouts stop ≤ 1 s of their payments",
    measured: `${payments.drain.backlog} left, ${createdPerSecond.toFixed(0)}/s written (delivered ÷ written ${f2(payments.deliveredDuringCheckout / payments.created)}×)`,
    met: payments.drain.backlog <= createdPerSecond,
  };
}

/**
 * The goals that the checkout table and the payments phase answer, in the
 * order the report lists them.
 * `checkout`: the route costs' new key and replay, each on an instance that handles no webhooks
 * but those sent to it. The slices' CPU per request is not that: their instance also handles the
 * payment webhooks of its checkouts, and the payment worker's CPU is counted with it.
 */
export function goals(
  cells: Cells,
  payments: PaymentsReport,
  checkout?: { newKey: number; replay: number },
): Goal[] {
  const at: FiguresAt = (c, s) =>
    cells.get(c)?.get(s) ? figuresOf(cells.get(c)!.get(s)!) : undefined;
  return [
    ...controlGoals(at),
    ...checkoutCpuGoal(checkout),
    ...baselineGoal(at),
    ...perConnectionGoals(at),
    errorsGoal(cells),
    paymentsGoal(payments),
  ];
}

export function goalsMarkdown(list: Goal[]): string {
  return [
    "| goal | measured | |",
    "|---|---|---|",
    ...list.map((g) => `| ${g.goal} | ${g.measured} | **${g.met ? "met" : "missed"}** |`),
  ].join("\n");
}
