// Counters over time: per minute for the last 24 h, from IdempotencyCounterMinute (the engine's
// flush adds every delta to the current minute's row). Minutes with nothing counted have no row;
// the series fills them with zeros so a chart's x axis is the clock, not the rows.
import { Prisma } from "@/generated/prisma/client";
import type { Queryable } from "./keys-query";

/** The events the incident chart draws: what an operator watches when something goes wrong. */
export const CHART_EVENTS = ["executed", "replayed", "conflicts", "mismatches", "store_errors"] as const;
export type ChartEvent = (typeof CHART_EVENTS)[number];

/** 24 h of minutes: the table keeps no more (the engine's cleanup deletes older rows). */
export const SERIES_MINUTES = 24 * 60;

export interface SeriesFilter {
  scope?: string;
  procedure?: string;
}

export interface CounterSeries {
  /** The first minute of the window (UTC, ISO); point i is that minute + i. */
  from: string;
  minutes: number;
  /** One count per minute per event, oldest first. */
  series: Record<ChartEvent, number[]>;
  totals: Record<ChartEvent, number>;
}

/**
 * Sums per (minute, event) over the window, for one tenant and procedure, or across them. The
 * window ends at the database's current minute. With a tenant and procedure the primary key
 * (scope, procedure, event, minute) serves the read; across them, IdempotencyCounterMinute_minute_idx.
 */
export async function readCounterSeries(db: Queryable, filter: SeriesFilter): Promise<CounterSeries> {
  const where: Prisma.Sql[] = [Prisma.sql`"minute" > date_trunc('minute', now()) - make_interval(mins => ${SERIES_MINUTES})`];
  where.push(Prisma.sql`"event" = ANY(${[...CHART_EVENTS]}::text[])`);
  if (filter.scope) where.push(Prisma.sql`"scope" = ${filter.scope}`);
  if (filter.procedure) where.push(Prisma.sql`"procedure" = ${filter.procedure}`);
  const [rows, clock] = await Promise.all([
    db.$queryRaw<{ minute: Date; event: ChartEvent; n: number }[]>(Prisma.sql`
      SELECT "minute", "event", sum("count")::float8 AS "n" FROM "IdempotencyCounterMinute"
      WHERE ${Prisma.join(where, " AND ")} GROUP BY "minute", "event"`),
    db.$queryRaw<{ from: Date }[]>(Prisma.sql`
      SELECT date_trunc('minute', now()) - make_interval(mins => ${SERIES_MINUTES - 1}) AS "from"`),
  ]);
  const from = clock[0]!.from;
  const series = Object.fromEntries(CHART_EVENTS.map((e) => [e, new Array<number>(SERIES_MINUTES).fill(0)])) as Record<ChartEvent, number[]>;
  const totals = Object.fromEntries(CHART_EVENTS.map((e) => [e, 0])) as Record<ChartEvent, number>;
  for (const r of rows) {
    const i = Math.round((r.minute.getTime() - from.getTime()) / 60_000);
    if (i < 0 || i >= SERIES_MINUTES) continue;
    series[r.event][i] = (series[r.event][i] ?? 0) + r.n;
    totals[r.event] += r.n;
  }
  return { from: from.toISOString(), minutes: SERIES_MINUTES, series, totals };
}
