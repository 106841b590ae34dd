// The operator's numbers (admin.stats and /api/metrics): the counters per tenant and procedure
// (executed, replayed, conflicts, …) from the cluster-wide IdempotencyCounter table, plus live
// counts: keys by status, stuck leases, outbox, the reaper's lag, and the store's replication.
import type { Engine } from "@/server/engine";
import { CounterEvent } from "@once/idempotency/operator";
import { readCounters, type CounterRow } from "@/server/admin/keys-query";
import { keyGauges } from "@/server/admin/key-gauges";
import type { Db } from "@/server/db/client";
import { logger } from "@/server/logger";
import { readReplicationStatus } from "@/server/replication";
import type { Refusals } from "@/http/refusals";
import { FindingKind } from "@/generated/prisma/enums";

const COUNTER_EVENTS = Object.values(CounterEvent);
type CounterCounts = Record<CounterEvent, number>;

const zero = (): CounterCounts =>
  Object.fromEntries(COUNTER_EVENTS.map((e) => [e, 0])) as CounterCounts;
const isEvent = (e: string): e is CounterEvent => (COUNTER_EVENTS as string[]).includes(e);

async function outboxGauges(db: Db) {
  const rows = await db.outboxMessage.groupBy({ by: ["status"], _count: { _all: true } });
  const out = { PENDING: 0, DELIVERED: 0, DEAD: 0 };
  for (const r of rows) out[r.status] = r._count._all;
  return out;
}

/** Every finding kind with its number from `rows` (0 when none). */
function perKind(rows: { kind: FindingKind; n: number | null }[]): Record<FindingKind, number> {
  const out = Object.fromEntries(Object.values(FindingKind).map((k) => [k, 0]));
  for (const r of rows) out[r.kind] = r.n ?? 0;
  return out as Record<FindingKind, number>;
}

/** The open reconciliation findings, per kind. */
async function openFindingGauges(db: Db) {
  const rows = await db.reconciliationFinding.groupBy({
    by: ["kind"],
    where: { resolvedAt: null },
    _count: { _all: true },
  });
  return perKind(rows.map((r) => ({ kind: r.kind, n: r._count._all })));
}

/**
 * The findings found so far, per kind: each counted when recorded and again each time it was
 * opened again after being resolved. Rows are never deleted, so the sums only grow: a counter.
 */
export async function findingsFoundByKind(db: Db): Promise<Record<FindingKind, number>> {
  const rows = await db.reconciliationFinding.groupBy({ by: ["kind"], _sum: { timesFound: true } });
  return perKind(rows.map((r) => ({ kind: r.kind, n: r._sum.timesFound })));
}

/** The counter rows summed per (tenant, procedure), and over all of them. */
function countersByPair(rows: CounterRow[]) {
  const byPair = new Map<string, { tenant: string; procedure: string; counts: CounterCounts }>();
  const totals = zero();
  for (const r of rows) {
    if (!isEvent(r.event)) continue;
    const k = `${r.scope}\u0000${r.procedure}`;
    const entry = byPair.get(k) ?? { tenant: r.scope, procedure: r.procedure, counts: zero() };
    byPair.set(k, entry);
    entry.counts[r.event] += r.count;
    totals[r.event] += r.count;
  }
  return { counters: [...byPair.values()], totals };
}

/**
 * `refusals`: the requests this instance answered without their work, by reason (its own since it
 * started: unlike the engine's counters they are not flushed to the database).
 */
export async function readStats(db: Db, engine: Engine, refusals?: Refusals) {
  // This instance's unflushed deltas first, so an operator sees their own action at once; other
  // instances' arrive with their next flush (every few seconds).
  await engine.counters
    .flush(engine.run)
    .catch((error: unknown) => logger.warn({ error }, "counter flush failed"));
  const [counterRows, keys, outbox, openFindingsByKind, foundByKind, replication, reaperLag] =
    await Promise.all([
      readCounters(db),
      keyGauges(db),
      outboxGauges(db),
      openFindingGauges(db),
      findingsFoundByKind(db),
      readReplicationStatus(db),
      engine.reaperLagSeconds(),
    ]);
  // Retention keeping up: the age of the oldest key past it, and whether that is past the warning.
  const warnAboveSeconds = engine.config.reaperLagWarnSeconds;
  const behind = reaperLag > warnAboveSeconds;
  const reaper = { lagSeconds: Math.round(reaperLag), warnAboveSeconds, behind };
  return {
    events: COUNTER_EVENTS,
    ...countersByPair(counterRows),
    keys,
    outbox,
    openFindings: Object.values(openFindingsByKind).reduce((a, b) => a + b, 0),
    openFindingsByKind,
    findingsFoundByKind: foundByKind,
    replication,
    reaper,
    refusals: refusals?.snapshot() ?? [],
  };
}
