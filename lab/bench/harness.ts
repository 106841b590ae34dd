// Measurement tools for the benchmark: a pg pool that counts the statements it sends (round trips)
// and the connections it opens, a latency recorder, and the table printer.
import pg from "pg";

export class CountingPool extends pg.Pool {
  statements = 0;
  connections = 0;
  constructor(config: pg.PoolConfig) {
    super(config);
    this.on("connect", (client: pg.PoolClient) => {
      this.connections++;
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
        ...args: unknown[]
      ) => {
        this.statements++;
        return query(...args);
      };
    });
  }
  snapshot() {
    return { statements: this.statements, connections: this.connections };
  }
}

export interface Sample {
  latenciesMs: number[];
  wallMs: number;
  calls: number;
  statements: number;
  connections: number;
}

import { percentile } from "../../tools/stats";

/**
 * Runs `calls` calls through `run`, each timed by the `timed` it is handed, and counts the
 * statements and connections the pool saw meanwhile.
 */
async function measure(
  pool: CountingPool,
  calls: number,
  run: (timed: (call: () => Promise<unknown>) => Promise<void>) => Promise<void>,
): Promise<Sample> {
  const before = pool.snapshot();
  const latenciesMs: number[] = [];
  const started = performance.now();
  await run(async (call) => {
    const t0 = performance.now();
    await call();
    latenciesMs.push(performance.now() - t0);
  });
  const wallMs = performance.now() - started;
  const after = pool.snapshot();
  return {
    latenciesMs,
    wallMs,
    calls,
    statements: after.statements - before.statements,
    connections: after.connections - before.connections,
  };
}

/** Runs `op` `calls` times sequentially, timing each call. */
export function sequential(
  pool: CountingPool,
  calls: number,
  op: (i: number) => Promise<unknown>,
): Promise<Sample> {
  return measure(pool, calls, async (timed) => {
    for (let i = 0; i < calls; i++) await timed(() => op(i));
  });
}

/** Adds `next` to `into`: the samples of one implementation, measured in several slices. */
export function merge(into: Sample | undefined, next: Sample): Sample {
  if (!into) return next;
  return {
    latenciesMs: into.latenciesMs.concat(next.latenciesMs),
    wallMs: into.wallMs + next.wallMs,
    calls: into.calls + next.calls,
    statements: into.statements + next.statements,
    connections: into.connections + next.connections,
  };
}

/**
 * Measures several implementations of one path in alternating slices, so that whatever else the
 * machine does during the run (a compaction, another process) falls on all of them alike.
 */
export async function interleaved<K extends string>(
  slices: number,
  impls: Record<K, (slice: number) => Promise<Sample>>,
): Promise<Record<K, Sample>> {
  const out = {} as Record<K, Sample>;
  for (let slice = 0; slice < slices; slice++) {
    for (const name of Object.keys(impls) as K[])
      out[name] = merge(out[name], await impls[name](slice));
  }
  return out;
}

/** `rounds` rounds of `width` concurrent calls (one burst per round), timing every call. */
export function bursts(
  pool: CountingPool,
  rounds: number,
  width: number,
  op: (round: number) => Promise<unknown>,
): Promise<Sample> {
  return measure(pool, rounds * width, async (timed) => {
    for (let r = 0; r < rounds; r++)
      await Promise.all(Array.from({ length: width }, () => timed(() => op(r))));
  });
}

export interface Row {
  path: string;
  floor: Sample;
  engine: Sample;
  /** Optional: the same business write through Prisma with no idempotency, for scale. */
  prismaOnly?: Sample;
  /**
   * Optional: the floor's own business transaction with no idempotency: the floor above it is
   * what the protocol costs written by hand.
   */
  floorTransactionOnly?: Sample;
  /** Optional: the floor with its reservation committed asynchronously, as the engine's is. */
  floorAsync?: Sample;
  /** Optional: a single-statement read of the stored answer, the least a replay can cost. */
  readFloor?: Sample;
  goal: { metric: "p50" | "p99"; maxRatio: number };
  /**
   * The engine's own name in the table, when it is not the plain engine (e.g. "once engine, replay
   * cache").
   */
  engineLabel?: string;
  /** Other ways to do the same, each printed with its ratio to the floor and the engine's to it. */
  alternatives?: { label: string; sample: Sample }[];
}

function stats(s: Sample) {
  const sorted = [...s.latenciesMs].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    opsPerSec: (s.calls / s.wallMs) * 1000,
    rtPerCall: s.statements / s.calls,
    connections: s.connections,
  };
}

export function table(rows: Row[]): string {
  const header =
    "| path | impl | p50 ms | p99 ms | ops/s | round trips/call | connections opened | ratio to floor (p50 / p99 / ops/s) | goal |";
  const lines = [header, "|---|---|---:|---:|---:|---:|---:|---|---|"];
  for (const row of rows) {
    const f = stats(row.floor);
    const e = stats(row.engine);
    const ratio = row.goal.metric === "p50" ? e.p50 / f.p50 : e.p99 / f.p99;
    const met = ratio <= row.goal.maxRatio && e.connections === 0 ? "met" : "missed";
    lines.push(
      `| ${row.path} | raw pg floor | ${f.p50.toFixed(3)} | ${f.p99.toFixed(3)} | ${f.opsPerSec.toFixed(0)} | ${f.rtPerCall.toFixed(2)} | ${f.connections} | 1.00 / 1.00 / 1.00 | |`,
    );
    let above = "";
    if (row.prismaOnly) {
      const p = stats(row.prismaOnly);
      above = `; +${(e.p50 - p.p50).toFixed(2)} ms p50 above Prisma alone (goal ≤ 0.35)`;
      lines.push(
        `| ${row.path} | Prisma transaction, no idempotency (reference) | ${p.p50.toFixed(3)} | ${p.p99.toFixed(3)} | ${p.opsPerSec.toFixed(0)} | ${p.rtPerCall.toFixed(2)} | ${p.connections} | ` +
          `${(p.p50 / f.p50).toFixed(2)} / ${(p.p99 / f.p99).toFixed(2)} / ${(p.opsPerSec / f.opsPerSec).toFixed(2)} | |`,
      );
    }
    lines.push(
      `| ${row.path} | ${row.engineLabel ?? "once engine"} | ${e.p50.toFixed(3)} | ${e.p99.toFixed(3)} | ${e.opsPerSec.toFixed(0)} | ${e.rtPerCall.toFixed(2)} | ${e.connections} | ` +
        `${(e.p50 / f.p50).toFixed(2)} / ${(e.p99 / f.p99).toFixed(2)} / ${(e.opsPerSec / f.opsPerSec).toFixed(2)} | ` +
        `${row.goal.metric} ≤ ${row.goal.maxRatio}×, 0 reconnects: **${met}** (${ratio.toFixed(2)}×${above}) |`,
    );
    lines.push(...comparisons(row, e));
  }
  return lines.join("\n");
}

type Stats = ReturnType<typeof stats>;

/** A reference's own line: its figures, and the engine's ratio `to` it. */
function referenceLine(path: string, label: string, r: Stats, e: Stats, to = "engine to this") {
  return (
    `| ${path} | ${label} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.opsPerSec.toFixed(0)} | ${r.rtPerCall.toFixed(2)} | ${r.connections} | ` +
    `${to}: ${(e.p50 / r.p50).toFixed(2)} / ${(e.p99 / r.p99).toFixed(2)} / ${(e.opsPerSec / r.opsPerSec).toFixed(2)} | |`
  );
}

const plusMs = (a: number, b: number) => `${a - b >= 0 ? "+" : ""}${(a - b).toFixed(3)}`;

/**
 * What the protocol costs written by hand: the floor (and the floor with the engine's asynchronous
 * reservation) above the same raw transaction without idempotency. No engine of this design can add
 * less than that on the machine that ran it.
 */
function protocolCost(row: Row, e: Stats, transactionOnly: Sample): string[] {
  const t = stats(transactionOnly);
  const above = (label: string, f: Stats) =>
    `| ${row.path} | ${label}, above that transaction: the protocol by hand | ${plusMs(f.p50, t.p50)} ms | ${plusMs(f.p99, t.p99)} ms | | | | | |`;
  const lines = [
    referenceLine(row.path, "raw pg transaction, no idempotency (BEGIN, the write, COMMIT)", t, e),
    above("raw pg floor", stats(row.floor)),
  ];
  if (row.floorAsync) {
    const label = "raw pg floor, its reservation committed asynchronously (as the engine's)";
    const a = stats(row.floorAsync);
    lines.push(referenceLine(row.path, label, a, e), above(label, a));
  }
  return lines;
}

/** Extra lines: the engine above Prisma alone (absolute ms), and a replay against a bare read. */
function comparisons(row: Row, e: Stats): string[] {
  const out: string[] = [];
  if (row.prismaOnly) {
    const p = stats(row.prismaOnly);
    out.push(
      `| ${row.path} | once engine above the same transaction without idempotency | ${plusMs(e.p50, p.p50)} ms | ${plusMs(e.p99, p.p99)} ms | | | | ` +
        `${(e.p50 / p.p50).toFixed(2)} / ${(e.p99 / p.p99).toFixed(2)} / ${(e.opsPerSec / p.opsPerSec).toFixed(2)} (to Prisma alone) | |`,
    );
  }
  if (row.floorTransactionOnly) out.push(...protocolCost(row, e, row.floorTransactionOnly));
  for (const alt of row.alternatives ?? [])
    out.push(referenceLine(row.path, alt.label, stats(alt.sample), e));
  if (row.readFloor) {
    const label = "raw pg single-statement read (SELECT by scope, key)";
    out.push(referenceLine(row.path, label, stats(row.readFloor), e, "engine to this read"));
  }
  return out;
}
