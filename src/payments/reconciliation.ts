// Reconciliation: the provider's charges, read through its list API, judged against the orders by
// a pure function (books/judge.ts); this is the runner around it. It runs by itself on an interval
// (startPaymentJobs) in whichever process runs payments, and on demand (`npm run reconcile`).
//
// Each run makes two passes, each with a cursor in the shop's database (reconciliation-cursors.ts):
// - the recent pass judges the charges created, and the paid or failed orders *updated*, since the
//   previous run (less LATE_WRITE_MARGIN_SECONDS): whatever changed on either side is judged
//   within one period;
// - the sweep judges one slice of the whole history, the next slice each run, and wraps around to
//   the oldest record when it reaches the present: every charge and every paid order is judged
//   again at least once per SWEEP_LAP_SECONDS (ten minutes at the default interval), whatever
//   its age.
// Each pass reads the list a page at a time under the run's budget (charge-pages.ts), judges the
// page with its orders, writes what it found (recorded, opened again, and the findings about its
// subjects that are gone closed) and drops it (reconciliation-scope.ts): a run holds one page and
// counts, whatever the provider answers. When the budget runs out the run ends cleanly and each
// pass's cursor moves to the second its list stopped at; nothing is skipped.
import type { Db } from "./db";
import type { FindingLogger } from "./books/finding-log";
import { BudgetStop, RunBudget, type BudgetUse } from "./charge-pages";
import { DEFAULT_RECONCILE_BUDGET, type ReconcileBudget } from "./config";
import { closePaidDeadLetters } from "./dead-letters";
import type { PaymentProvider } from "./provider";
import {
  advanceRecent,
  LAP_START,
  readState,
  RECENT_CURSOR,
  setCursor,
  setResume,
  SWEEP_CURSOR,
  SWEEP_LAP_SECONDS,
  sweepSlice,
  type PassState,
} from "./reconciliation-cursors";
import { forgetSightings } from "./reconciliation-orders";
import {
  emptyTally,
  judgeScope,
  LATE_WRITE_MARGIN_SECONDS,
  type ScopeContext,
  type Tally,
} from "./reconciliation-scope";

export { FindingKind, type Finding } from "./books/finding";
export { findingLine } from "./books/finding-log";
export { PENDING_SETTLE_SECONDS } from "./books/judge";
export { LATE_WRITE_MARGIN_SECONDS } from "./reconciliation-scope";
export { SWEEP_LAP_SECONDS } from "./reconciliation-cursors";

/**
 * The job leaves charges younger than this to its next run: the webhook (or the worker's
 * recording) of a charge made a moment ago may still be on its way. `npm run reconcile` judges up
 * to the moment it starts (0), and says what it leaves in flight.
 */
export const SETTLE_SECONDS = 30;

export interface ReconciliationResult extends Tally {
  /** Dead-lettered payments whose order was paid after all, closed by this run. */
  closedDeadLetters: number;
  /** The charges and orders were judged up to this time. */
  judgedUntil: Date;
  /** The slice of history the sweep judged; `lapCompleted` when it reached the present. */
  sweep?: { from: Date; until: Date; lapCompleted: boolean };
  /** What the run read of the provider's list, and why it stopped early if it did. */
  budget: BudgetUse;
  /** Set when the budget stopped the list: the provider's second where the next run goes on. */
  continueFrom?: Date;
}

export interface ReconciliationOptions {
  /** Charges younger than this are left to the next run (SETTLE_SECONDS); 0 judges up to now. */
  settleSeconds?: number;
  /** How often the job runs: the sweep's slices are sized to finish a lap in SWEEP_LAP_SECONDS. */
  intervalMs?: number;
  /** What a run may read of the provider's list (DEFAULT_RECONCILE_BUDGET). */
  budget?: ReconcileBudget;
  /** The budget's clock (tests). */
  clock?: () => number;
  /** Where each finding recorded, opened again or closed is said (the process's pino logger). */
  logger?: FindingLogger;
}

/** What every run of one reconciliation shares. */
interface RunContext {
  db: Db;
  provider: PaymentProvider;
  settleSeconds: number;
  runsPerLap: number;
  options: ReconciliationOptions;
}

export function createReconciliation(
  db: Db,
  provider: PaymentProvider,
  options: ReconciliationOptions = {},
) {
  const interval = options.intervalMs ?? 60_000;
  const ctx: RunContext = {
    db,
    provider,
    settleSeconds: options.settleSeconds ?? SETTLE_SECONDS,
    runsPerLap: Math.max(1, Math.floor((SWEEP_LAP_SECONDS * 1000) / interval)),
    options,
  };
  return {
    /** The job's run: the recent pass and one slice of the sweep. */
    runOnce: () => runJob(ctx),
    /**
     * Everything that changed since `since` (charges created, orders updated), or the whole
     * history when it is undefined: `npm run reconcile -- --since <date>` and `--all`. Moves no
     * cursor. When the budget stops it, `continueFrom` is where the next call (`resume`) goes on.
     */
    runSince: (since?: Date, resume?: Date) => runRange(ctx, since, resume),
  };
}
export type Reconciliation = ReturnType<typeof createReconciliation>;

/** A run's own: the database's clock at its start, its budget, its tally. */
function startRun(ctx: RunContext, now: Date, budget: RunBudget): ScopeContext {
  const { db, provider, options } = ctx;
  return { db, provider, now, budget, log: options.logger, tally: emptyTally() };
}

const newBudget = (ctx: RunContext) =>
  new RunBudget(ctx.options.budget ?? DEFAULT_RECONCILE_BUDGET, ctx.options.clock);
const settledBy = (ctx: RunContext, now: Date) =>
  new Date(now.getTime() - ctx.settleSeconds * 1000);
const MARGIN_MS = LATE_WRITE_MARGIN_SECONDS * 1000;
/** The order statuses the recent pass judges from the order's side (a change to either). */
const SETTLED = ["PAID", "PAYMENT_FAILED"] as const;

/** The job's run: the recent pass and one slice of the sweep, each going on where it stopped. */
async function runJob(ctx: RunContext): Promise<ReconciliationResult> {
  const budget = newBudget(ctx);
  const state = await readState(ctx.db, ctx.provider, budget);
  const run = startRun(ctx, state.now, budget);
  const until = settledBy(ctx, state.now);
  const recent = await recentPass(run, state, until);
  const sweep = await sweepPass(run, state, until, ctx.runsPerLap);
  return finish(run, until, { sweep, ...(recent.cutAt ? { continueFrom: recent.cutAt } : {}) });
}

async function recentPass(run: ScopeContext, state: PassState, until: Date) {
  const ordersFrom = new Date((state.recent ?? until).getTime() - MARGIN_MS);
  const chargesFrom = later(state.recentResume, ordersFrom);
  const { cutAt } = await judgeScope(run, {
    charges: { from: chargesFrom, until },
    orders: { by: "updatedAt", range: { from: ordersFrom, until }, statuses: SETTLED },
  });
  // Cut: the next run goes on from the margin before the second the list stopped at.
  await advanceRecent(run.db, cutAt ?? until);
  await setResume(run.db, RECENT_CURSOR, stalled(cutAt, chargesFrom));
  return { cutAt };
}

/**
 * One slice of history. Its paid orders are judged from their side too (one whose charge lies in
 * another slice, taken over or made late, is looked up by its key); a failed order's charge names
 * it, and is judged when its own slice is listed.
 */
async function sweepPass(run: ScopeContext, state: PassState, until: Date, runsPerLap: number) {
  const { slice, lapCompleted } = sweepSlice(state, until, runsPerLap);
  const chargesFrom = later(state.sweepResume, slice.from);
  const { cutAt } = await judgeScope(run, {
    charges: { from: chargesFrom, until: slice.until },
    orders: { by: "createdAt", range: slice, statuses: ["PAID"] },
  });
  const through = cutAt
    ? new Date(Math.max(slice.from.getTime(), cutAt.getTime() - MARGIN_MS))
    : lapCompleted
      ? LAP_START
      : slice.until;
  await setCursor(run.db, SWEEP_CURSOR, through);
  await setResume(run.db, SWEEP_CURSOR, stalled(cutAt, chargesFrom));
  return { ...slice, lapCompleted: lapCompleted && !cutAt };
}

/** `runSince`: one budget's worth of the range, from `resume` when a previous call was cut. */
async function runRange(
  ctx: RunContext,
  since: Date | undefined,
  resume: Date | undefined,
): Promise<ReconciliationResult> {
  const [{ now }] = (await ctx.db.$queryRaw`SELECT now() AS "now"`) as [{ now: Date }];
  const run = startRun(ctx, now, newBudget(ctx));
  const until = settledBy(ctx, now);
  const from = since ?? LAP_START;
  // Going on from a cut: from the margin before it, as the job's passes do.
  const ordersFrom = resume ? later(new Date(resume.getTime() - MARGIN_MS), from) : from;
  const { cutAt } = await judgeScope(run, {
    charges: { from: ordersFrom, until },
    orders: { by: "updatedAt", range: { from: ordersFrom, until }, statuses: SETTLED },
  });
  return finish(run, until, cutAt ? { continueFrom: cutAt } : {});
}

/** The end of every run: the paid dead letters closed, the run's sightings let go. */
async function finish(
  run: ScopeContext,
  judgedUntil: Date,
  extra: Pick<ReconciliationResult, "sweep" | "continueFrom">,
): Promise<ReconciliationResult> {
  const closed = await closePaidDeadLetters(run.db);
  await forgetSightings(run.db, run.now);
  return {
    ...run.tally,
    closedDeadLetters: closed.length,
    judgedUntil,
    budget: run.budget.use(),
    ...extra,
  };
}

/**
 * Where a cut pass's list must go on next run when starting from the margin before the cut would
 * read nothing new (the whole budget went on the margin's charges: over 750 a second at the
 * default budget): from the cut itself, so every run moves on. Undefined otherwise.
 */
function stalled(cutAt: Date | undefined, chargesFrom: Date): Date | undefined {
  if (!cutAt) return undefined;
  return cutAt.getTime() - MARGIN_MS <= chargesFrom.getTime() ? cutAt : undefined;
}

/** The later of two times, an unset one being no time at all. */
function later(a: Date | null | undefined, b: Date): Date {
  return a && a > b ? a : b;
}

/** A run's budget stop as one log line: why, what it read, and where the next run goes on. */
export function budgetLine(result: ReconciliationResult): string | undefined {
  const { stopped, pages, bytes } = result.budget;
  if (!stopped) return undefined;
  const read = `${result.charges} charge(s) judged from ${pages} page(s), ${bytes} bytes`;
  const next = result.continueFrom
    ? `; the next run goes on from ${result.continueFrom.toISOString()}`
    : "; the next run starts where this one did";
  return stopped.reason === BudgetStop.PAGE_TOO_LARGE
    ? `[reconciliation] run failed: ${stopped.detail}; ${read}${next}`
    : `[reconciliation] run stopped early: it ${stopped.detail}; ${read}${next}`;
}
