// Counters over time: per minute for the last 24 h, from IdempotencyCounterMinute (the engine's
// flush adds every delta to the current minute's row). Minutes with nothing counted have no row;
// the series fills them with zeros so a chart's x axis is the clock, not the rows.
import { Prisma } from "@/generated/prisma/client";
import { CHART_EVENTS, type ChartEvent } from "@/shared/chart-events";
import type { Queryable } from "./keys-query";

/** 24 h of minutes: the table keeps no more (the engine's cleanup deletes older rows). */
const SERIES_MINUTES = 24 * 60;

/** A chart is per tenant (across every tenant: every row of the day); one procedure or every. */
type SeriesFilter = { scope: string; procedure?: string };

const isChartEvent = (e: string): e is ChartEvent =>
  (CHART_EVENTS as readonly string[]).includes(e);

/**
 * Per event, "minute:count" pairs (minute: offset from the window's first) as one text: five rows
 * whatever the window holds, and text decodes fastest (7 200 numbers in arrays cost Prisma more
 * than the query). The primary key serves the read: a tenant's rows are one index range.
 */
export function counterSeriesQuery(filter: SeriesFilter): Prisma.Sql {
  const procedure = filter.procedure
    ? Prisma.sql`AND c."procedure" = ${filter.procedure}`
    : Prisma.empty;
  // Grouped by event only: a tenant's procedures may share a minute, and the caller adds them up
  // (cheaper than a (minute, event) hash aggregate over every row in SQL).
  return Prisma.sql`
    WITH "window" AS (SELECT date_trunc('minute', now()) - make_interval(mins => ${SERIES_MINUTES - 1}) AS "from")
    SELECT "window"."from", c."event",
      string_agg(((EXTRACT(EPOCH FROM (c."minute" - "window"."from")) / 60)::int)::text || ':' || c."count"::text, ',') AS "points"
    FROM "window" LEFT JOIN "IdempotencyCounterMinute" AS c
      ON c."scope" = ${filter.scope} ${procedure} AND c."event" = ANY(${[...CHART_EVENTS]}::text[]) AND c."minute" >= "window"."from"
    GROUP BY 1, 2`;
}

export async function readCounterSeries(db: Queryable, filter: SeriesFilter) {
  const rows = await db.$queryRaw<{ from: Date; event: string | null; points: string | null }[]>(
    counterSeriesQuery(filter),
  );
  const from = rows[0]!.from;
  const series = Object.fromEntries(
    CHART_EVENTS.map((e) => [e, new Array<number>(SERIES_MINUTES).fill(0)]),
  ) as Record<ChartEvent, number[]>;
  const totals = Object.fromEntries(CHART_EVENTS.map((e) => [e, 0])) as Record<ChartEvent, number>;
  for (const r of rows) {
    if (!r.event || !isChartEvent(r.event) || !r.points) continue;
    const line = series[r.event];
    for (const point of r.points.split(",")) {
      const [i, n] = point.split(":").map(Number) as [number, number];
      if (!(i >= 0 && i < SERIES_MINUTES)) continue;
      line[i] = (line[i] ?? 0) + n;
      totals[r.event] += n;
    }
  }
  // Point i of each event's series is minute `from` + i, oldest first.
  return { from: from.toISOString(), minutes: SERIES_MINUTES, series, totals };
}
