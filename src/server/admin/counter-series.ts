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
  /** A chart is per tenant: across every tenant the read would be every row of the day. */
  scope: string;
  /** One procedure, or every procedure of the tenant. */
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

const isChartEvent = (e: string): e is ChartEvent => (CHART_EVENTS as readonly string[]).includes(e);

/**
 * Per event, the minutes (as offsets from the window's first minute) that counted something and
 * their sums: five rows whatever the window holds, so the answer costs one short read. The window
 * ends at the database's current minute. The primary key (scope, procedure, event, minute) serves
 * the read: a tenant's rows are one index range.
 */
export async function readCounterSeries(db: Queryable, filter: SeriesFilter): Promise<CounterSeries> {
  const procedure = filter.procedure ? Prisma.sql`AND "procedure" = ${filter.procedure}` : Prisma.empty;
  const rows = await db.$queryRaw<{ from: Date; event: string | null; at: number[] | null; n: number[] | null }[]>(Prisma.sql`
    WITH "window" AS (SELECT date_trunc('minute', now()) - make_interval(mins => ${SERIES_MINUTES - 1}) AS "from"),
    "sums" AS (
      SELECT "event", (EXTRACT(EPOCH FROM ("minute" - "window"."from")) / 60)::int AS "at", sum("count")::float8 AS "n"
      FROM "IdempotencyCounterMinute", "window"
      WHERE "scope" = ${filter.scope} ${procedure} AND "event" = ANY(${[...CHART_EVENTS]}::text[]) AND "minute" >= "window"."from"
      GROUP BY 1, 2
    )
    SELECT "window"."from", "sums"."event", array_agg("sums"."at") AS "at", array_agg("sums"."n") AS "n"
    FROM "window" LEFT JOIN "sums" ON true GROUP BY 1, 2`);
  const from = rows[0]!.from;
  const series = Object.fromEntries(CHART_EVENTS.map((e) => [e, new Array<number>(SERIES_MINUTES).fill(0)])) as Record<ChartEvent, number[]>;
  const totals = Object.fromEntries(CHART_EVENTS.map((e) => [e, 0])) as Record<ChartEvent, number>;
  for (const r of rows) {
    if (!r.event || !isChartEvent(r.event) || !r.at || !r.n) continue;
    for (const [k, i] of r.at.entries()) {
      const n = r.n[k] ?? 0;
      if (i < 0 || i >= SERIES_MINUTES) continue;
      series[r.event][i] = (series[r.event][i] ?? 0) + n;
      totals[r.event] += n;
    }
  }
  return { from: from.toISOString(), minutes: SERIES_MINUTES, series, totals };
}
