// Where reconciliation's passes stand, in the shop's database (ReconciliationCursor): the recent
// pass's "judged through" (never backwards), the sweep's position in history, and for each, the
// second its list stopped at when a budget cut it ("<pass>:resume"). Also the sweep's slice for a
// run, and where history starts.
import type { Db } from "./db";
import { firstCharge, type RunBudget } from "./charge-pages";
import type { PaymentProvider } from "./provider";

export const RECENT_CURSOR = "provider-charges";
export const SWEEP_CURSOR = "sweep";
const resumeOf = (pass: string) => `${pass}:resume`;
/** Stored as the sweep's cursor when a lap ends: the next run starts from the oldest record. */
export const LAP_START = new Date(0);

/**
 * The sweep walks the whole history at least once in this time (at the configured interval): ten
 * runs at the default minute. A disagreement of any age that appears behind both passes (a
 * record written late, or changed in the past) is found within one lap and a run, under the
 * fifteen minutes the dashboard promises.
 */
export const SWEEP_LAP_SECONDS = 10 * 60;
/** The sweep's smallest slice: a young shop's history is walked in a few runs, not seconds. */
const MIN_SLICE_SECONDS = 60 * 60;

export interface PassState {
  now: Date;
  recent: Date | null;
  recentResume: Date | null;
  sweep: Date | null;
  sweepResume: Date | null;
  /** Where history starts: the oldest order or the provider's oldest charge. */
  origin: Date;
}

/**
 * The database's clock (the orders' times are the database's), the cursors, and the start of
 * history (the provider's oldest charge read as one page of the run's budget).
 */
export async function readState(
  db: Db,
  provider: PaymentProvider,
  budget: RunBudget,
): Promise<PassState> {
  const [state] = await db.$queryRaw<(Omit<PassState, "origin"> & { oldestOrder: Date | null })[]>`
    SELECT now() AS "now",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${RECENT_CURSOR}) AS "recent",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(RECENT_CURSOR)}) AS "recentResume",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${SWEEP_CURSOR}) AS "sweep",
      (SELECT "judgedThrough" FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(SWEEP_CURSOR)}) AS "sweepResume",
      (SELECT min("createdAt") FROM "Order") AS "oldestOrder"`;
  const { oldestOrder, ...cursors } = state!;
  const starts = [cursors.now.getTime(), oldestOrder?.getTime() ?? Infinity];
  const oldestCharge = await firstCharge(provider, budget);
  if (oldestCharge) starts.push(Math.floor(oldestCharge.created) * 1000);
  return { ...cursors, origin: new Date(Math.min(...starts)) };
}

/**
 * The sweep's slice for this run: from its position (or the start of history) to a lap's share of
 * history later, no further than the present; a lap is complete when the slice reaches it.
 */
export function sweepSlice(state: PassState, until: Date, runsPerLap: number) {
  const { origin, sweep: position } = state;
  const sliceMs = Math.max(
    MIN_SLICE_SECONDS * 1000,
    Math.ceil((until.getTime() - origin.getTime()) / runsPerLap),
  );
  const from = position && position > origin ? position : origin;
  const end = new Date(Math.min(from.getTime() + sliceMs, until.getTime()));
  return { slice: { from, until: end }, lapCompleted: end.getTime() >= until.getTime() };
}

/** Never backwards: two runs at once (the server's and a worker's) may finish in either order. */
export async function advanceRecent(db: Db, judgedThrough: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconciliationCursor" ("name", "judgedThrough") VALUES (${RECENT_CURSOR}, ${judgedThrough})
    ON CONFLICT ("name") DO UPDATE SET "judgedThrough" = GREATEST("ReconciliationCursor"."judgedThrough", EXCLUDED."judgedThrough"), "updatedAt" = now()`;
}

/**
 * The sweep's position. Two runs at once may judge a slice twice or skip back a slice: harmless,
 * the findings are deduplicated and the next lap comes anyway.
 */
export async function setCursor(db: Db, name: string, judgedThrough: Date): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "ReconciliationCursor" ("name", "judgedThrough") VALUES (${name}, ${judgedThrough})
    ON CONFLICT ("name") DO UPDATE SET "judgedThrough" = EXCLUDED."judgedThrough", "updatedAt" = now()`;
}

/** Where a pass's list stopped (a budget cut it), or nothing when it ran to its end. */
export async function setResume(db: Db, pass: string, cutAt: Date | undefined): Promise<void> {
  if (cutAt) await setCursor(db, resumeOf(pass), cutAt);
  else await db.$executeRaw`DELETE FROM "ReconciliationCursor" WHERE "name" = ${resumeOf(pass)}`;
}
