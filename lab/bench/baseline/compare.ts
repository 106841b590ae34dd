// `npm run bench -- --baseline DIR [--rounds N] [--calls N] [--cpu-prof DIR]`: this checkout's app
// engine and another checkout's (DIR), a new key each call, in one run on one PostgreSQL server.
//
// Each build runs in its own worker process (worker.ts) started in its own checkout: its own
// module graph, Prisma client, pg and pool, so nothing of one build (a module cache, a prepared
// statement, a warmed JIT) helps or hinders the other. Each has its own database on the same
// server, migrated by its own migrations (an engine runs on the schema it was written for: an
// index or a column added since is part of its cost), set up and warmed the same way. The workers
// take turns, one slice at a time (ABAB…, the order rotated and flipped every round), so whatever
// else the machine does falls on both alike; one slice runs at a time, so they never compete for
// a core.
// Every round measures, per build, the engine and the same Prisma transaction without
// idempotency, and, in this build's worker, the protocol written by hand; figures are medians over
// rounds of per-round differences, with their interquartile range.
import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startThrowawayPostgres } from "../../../tools/db/embedded";
import { percentile } from "../../../tools/stats";
import type { Step } from "../fail";
import { CheckoutError, inspectCheckout, type Checkout } from "./checkout";
import type { Op, WorkerReply, WorkerRequest, WorkerStart } from "./protocol";

export interface CompareOptions {
  baseline: string;
  rounds: number;
  calls: number;
  /** Write a V8 CPU profile of each worker here (node --cpu-prof). */
  cpuProfDir?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const WORKER = resolve(here, "worker.ts");
const WARM_CALLS = 300;
/** The goal: this build's engine at most the protocol by hand plus this much. */
const HAND_MARGIN_MS = 0.5;

/**
 * Index entries PostgreSQL read in a build's key table per key it holds, once its worker has
 * stopped (a backend reports its counts when it ends). A statement that finds its key by a lookup
 * reads one or two; one planned to read the whole scope reads as many as the scope holds, which no
 * timing on a busy machine shows as plainly.
 */
async function indexReadsPerKey(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The workers' backends report as they exit, which may be a moment after their clients left.
    for (let tries = 0; tries < 1_000; tries++) {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "pid" <> pg_backend_pid()`,
      );
      if (rows[0]!.n === "0") break;
    }
    const { rows } = await client.query<{ reads: string | null; keys: string }>(
      `SELECT (SELECT sum("idx_tup_read") FROM pg_stat_user_indexes WHERE "relname" = 'IdempotencyKey') AS "reads",
              (SELECT count(*) FROM "IdempotencyKey") AS "keys"`,
    );
    return Number(rows[0]!.reads ?? 0) / Math.max(1, Number(rows[0]!.keys));
  } finally {
    await client.end();
  }
}

/** Parses the arguments after `npm run bench --`; null when --baseline is not among them. */
export function parseCompareArgs(argv: string[]): CompareOptions | null {
  const at = argv.indexOf("--baseline");
  if (at === -1) return null;
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i === -1) return undefined;
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new CheckoutError(`${flag} needs a value`);
    return v;
  };
  const count = (flag: string, fallback: number) => {
    const v = value(flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new CheckoutError(`${flag} ${v}: expected a whole number ≥ 1`);
    return n;
  };
  return {
    baseline: value("--baseline")!,
    rounds: count("--rounds", 30),
    calls: count("--calls", 100),
    cpuProfDir: value("--cpu-prof"),
  };
}

/** One build's worker: sends a request, waits for its answer. */
class Side {
  private pending: ((r: WorkerReply) => void) | null = null;
  private failure: string | null = null;
  readonly child: ChildProcess;

  constructor(
    readonly name: string,
    readonly checkout: Checkout,
    cpuProfDir: string | undefined,
  ) {
    const tsx = createRequire(import.meta.url).resolve("tsx");
    this.child = fork(WORKER, [], {
      cwd: checkout.dir,
      execArgv: [
        "--import",
        tsx,
        ...(cpuProfDir
          ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir, "--cpu-prof-name", `${name}.cpuprofile`]
          : []),
      ],
      // tsx reads the checkout's path aliases (@once/idempotency, @/…) from its own tsconfig.
      env: { ...process.env, TSX_TSCONFIG_PATH: checkout.tsconfig },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.child.on("message", (m: WorkerReply) => {
      if (m.kind === "failed") this.failure = m.error;
      const p = this.pending;
      this.pending = null;
      p?.(m);
    });
    this.child.on("exit", (code) => {
      const p = this.pending;
      this.pending = null;
      p?.({ kind: "failed", error: this.failure ?? `worker exited with code ${code}` });
    });
  }

  private ask(request: WorkerRequest | WorkerStart): Promise<WorkerReply> {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.child.send(request);
    });
  }

  private async expect(request: WorkerRequest | WorkerStart, kind: WorkerReply["kind"]) {
    const reply = await this.ask(request);
    if (reply.kind === "failed")
      throw new Error(`${this.name} build (${this.checkout.dir}) failed:\n${reply.error}`);
    if (reply.kind !== kind) throw new Error(`${this.name}: expected ${kind}, got ${reply.kind}`);
    return reply;
  }

  start(start: WorkerStart) {
    return this.expect(start, "ready");
  }

  async run(kind: "warm" | "run", op: Op, calls: number): Promise<number[]> {
    const reply = await this.expect({ kind, op, calls }, "done");
    return reply.kind === "done" ? reply.latenciesMs : [];
  }

  async stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    if (this.child.connected) this.child.send({ kind: "stop" } satisfies WorkerRequest);
    await exited;
  }
}

type Series = number[]; // one figure per round

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

function summary(xs: Series) {
  const sorted = [...xs].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), q1: percentile(sorted, 25), q3: percentile(sorted, 75) };
}

const ms = (x: number, sign = false) => `${sign && x >= 0 ? "+" : ""}${x.toFixed(3)}`;
const spread = (xs: Series, sign = false) => {
  const s = summary(xs);
  return `${ms(s.median, sign)} (IQR ${ms(s.q1, sign)} … ${ms(s.q3, sign)})`;
};

// A build by its directory and commit, for the person running the bench (standard error).
const describe = (c: Checkout) =>
  `\`${c.dir}\` at \`${c.commit}\`${c.dirty ? " (with changes)" : ""}`;
// The report (standard output) goes into docs/benchmarks.md, which describes the system as it is
// and names no machine's directory or commit (tools/repo/docs-today.test.ts): a build by its role.
const role = (c: Checkout, what: string) => `${what}${c.dirty ? " (with changes)" : ""}`;

/** The hand-written protocol's slices: this build's worker only (they do not depend on a build). */
const HAND: Op[] = ["handTransaction", "handFloor", "handPrisma"];

export async function compareWithBaseline(options: CompareOptions, log: Step): Promise<void> {
  const current = inspectCheckout(resolve(here, "../../.."));
  const baseline = inspectCheckout(options.baseline);
  if (baseline.dir === current.dir)
    throw new CheckoutError(`--baseline ${options.baseline}: that is this checkout`);
  log(`this build: ${describe(current)}; engine ${current.engineEntry}`);
  log(`baseline: ${describe(baseline)}; engine ${baseline.engineEntry}`);

  const server = await startThrowawayPostgres("once-bench-baseline-");
  const sides: Side[] = [];
  try {
    await server.createDatabase("bench_current");
    await server.createDatabase("bench_baseline");
    const cur = new Side("current", current, options.cpuProfDir);
    const base = new Side("baseline", baseline, options.cpuProfDir);
    sides.push(cur, base);
    log("starting both builds' workers (each migrates its own database)");
    await Promise.all([
      cur.start({ ...entry(current), url: server.url("bench_current"), label: "c" }),
      base.start({ ...entry(baseline), url: server.url("bench_baseline"), label: "b" }),
    ]);
    log("warming both builds alike");
    await warmBoth(cur, base);
    const rounds = await runRounds(cur, base, options, log);
    // Stopped before the key tables' index counts are read: each backend reports them as it ends.
    for (const side of sides) await side.stop();
    const reads = {
      current: await indexReadsPerKey(server.url("bench_current")),
      baseline: await indexReadsPerKey(server.url("bench_baseline")),
    };
    printComparison(options, { current, baseline }, rounds, reads);
  } finally {
    for (const side of sides) await side.stop().catch(() => {});
    await server.stop();
  }
}

function entry(checkout: Checkout) {
  return { dir: checkout.dir, engineEntry: checkout.engineEntry };
}

async function warmBoth(cur: Side, base: Side) {
  for (const op of ["prisma", "engine"] as const)
    for (const side of [cur, base]) await side.run("warm", op, WARM_CALLS);
  for (const op of HAND) await cur.run("warm", op, WARM_CALLS);
}

/** medians[side.op]: one median per round; all[side.op]: every call. */
interface Rounds {
  medians: Map<string, Series>;
  all: Map<string, number[]>;
}

async function runRounds(
  cur: Side,
  base: Side,
  options: CompareOptions,
  log: Step,
): Promise<Rounds> {
  const medians = new Map<string, Series>();
  const all = new Map<string, number[]>();
  const record = (key: string, latencies: number[]) => {
    medians.set(key, [...(medians.get(key) ?? []), median(latencies)]);
    all.set(key, [...(all.get(key) ?? []), ...latencies]);
  };
  // Every slice of a round, each in its turn; the turns rotate by one and flip direction every
  // round, so no slice keeps a place (first after the other build, last before it) the noise
  // favours. A difference is taken between slices of the same round, seconds apart at most.
  const slices: [Side, Op][] = [
    [cur, "prisma"],
    [base, "prisma"],
    [cur, "engine"],
    [base, "engine"],
    ...HAND.map((op): [Side, Op] => [cur, op]),
  ];
  for (let round = 0; round < options.rounds; round++) {
    log(`round ${round + 1}/${options.rounds}`);
    const at = round % slices.length;
    const turn = [...slices.slice(at), ...slices.slice(0, at)];
    for (const [side, op] of round % 2 === 0 ? turn : turn.reverse())
      record(`${side.name}.${op}`, await side.run("run", op, options.calls));
  }
  return { medians, all };
}

const minus = (a: Series, b: Series) => a.map((x, i) => x - b[i]!);

/** The per-round differences the comparison reports, each a series over rounds. */
function differences(medians: Map<string, Series>) {
  const m = (key: string) => medians.get(key)!;
  const curAdded = minus(m("current.engine"), m("current.prisma"));
  const handPrisma = minus(m("current.handPrisma"), m("current.prisma"));
  return {
    curAdded,
    baseAdded: minus(m("baseline.engine"), m("baseline.prisma")),
    baseAboveCurrentPrisma: minus(m("baseline.engine"), m("current.prisma")),
    difference: minus(m("current.engine"), m("baseline.engine")),
    handProtocol: minus(m("current.handFloor"), m("current.handTransaction")),
    handPrisma,
    overHand: minus(curAdded, handPrisma),
  };
}

function printComparison(
  options: CompareOptions,
  builds: { current: Checkout; baseline: Checkout },
  { medians, all }: Rounds,
  reads: { current: number; baseline: number },
) {
  const d = differences(medians);
  const slower = d.difference.filter((x) => x > 0).length;
  const p50 = (key: string) =>
    ms(
      percentile(
        [...all.get(key)!].sort((a, b) => a - b),
        50,
      ),
    );
  const rows = [
    "| figure | this build | baseline |",
    "|---|---:|---:|",
    `| Prisma transaction, no idempotency: p50 of every call, ms | ${p50("current.prisma")} | ${p50("baseline.prisma")} |`,
    `| app engine, a new key: p50 of every call, ms | ${p50("current.engine")} | ${p50("baseline.engine")} |`,
    `| app engine above its own Prisma transaction: median over rounds (IQR), ms | ${spread(d.curAdded, true)} | ${spread(d.baseAdded, true)} |`,
    `| app engine above this build's Prisma transaction (the same floor for both), ms | ${spread(d.curAdded, true)} | ${spread(d.baseAboveCurrentPrisma, true)} |`,
    `| key table: index entries read per key it holds (every statement of the run) | ${reads.current.toFixed(1)} | ${reads.baseline.toFixed(1)} |`,
  ];
  const lines = [
    `\nonce bench --baseline — ${new Date().toISOString()} — node ${process.version}, PostgreSQL embedded (one server, one database per build)`,
    `this build: ${role(builds.current, "the checkout running the bench")}`,
    `baseline:   ${role(builds.baseline, "the checkout given as --baseline")}`,
    `${options.rounds} rounds × ${options.calls} sequential calls per slice, the builds' slices taking turns (the order rotated and flipped each round)\n`,
    ...rows,
    "",
    "| comparison, per round (median over rounds, IQR) | ms |",
    "|---|---:|",
    `| this build's engine − the baseline's engine | ${spread(d.difference, true)} (slower in ${slower} of ${options.rounds} rounds) |`,
    `| the protocol by hand: raw pg floor (async reservation, write, fenced completion) − raw pg transaction | ${spread(d.handProtocol, true)} |`,
    `| the protocol by hand in the same Prisma transaction (the engine's reservation and completion statements, no engine code) − Prisma transaction | ${spread(d.handPrisma, true)} |`,
    `| this build's engine above Prisma − the protocol by hand in the same Prisma transaction | ${spread(d.overHand, true)} |`,
    "",
    `goal, this build's engine ≤ the baseline's: ${summary(d.difference).median <= 0 ? "met" : "missed"} (${ms(summary(d.difference).median, true)} ms)`,
    `goal, this build's engine above Prisma ≤ the protocol by hand + ${HAND_MARGIN_MS} ms: ${summary(d.overHand).median <= HAND_MARGIN_MS ? "met" : "missed"} (${ms(summary(d.overHand).median, true)} ms above it)`,
  ];
  console.log(lines.join("\n"));
  if (options.cpuProfDir)
    console.log(`\nCPU profiles: ${options.cpuProfDir}/{current,baseline}.cpuprofile`);
}
