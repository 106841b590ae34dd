// Counters per scope, procedure and event. Counting in memory and flushing deltas keeps a write
// off every request; the table adds up every instance's flushes, and dashboards and metrics read
// it.
import type { CounterEvent } from "./constants.js";
import type { SqlRunner } from "./store/postgres.js";

const SEP = "\u0000";

export interface CounterDelta {
  scope: string;
  procedure: string;
  event: CounterEvent;
  count: number;
}

/**
 * One statement for any number of deltas (arrays unnested into rows), added to the running totals
 * and to the current minute (the database's clock), which dashboards chart over the last 24 h.
 */
const FLUSH = `
  WITH "d" AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS d("scope", "procedure", "event", "count")
  ), "totals" AS (
    INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count", "updatedAt")
    SELECT "scope", "procedure", "event", "count", now() FROM "d"
    ON CONFLICT ("scope", "procedure", "event")
    DO UPDATE SET "count" = "IdempotencyCounter"."count" + EXCLUDED."count", "updatedAt" = now()
  )
  INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
  SELECT "scope", "procedure", "event", date_trunc('minute', now()), "count" FROM "d"
  ON CONFLICT ("scope", "procedure", "event", "minute")
  DO UPDATE SET "count" = "IdempotencyCounterMinute"."count" + EXCLUDED."count"`;

/** Minutes are kept a day: what a chart of the last 24 h needs. */
export const COUNTER_MINUTES_KEPT_HOURS = 24;

/** Deletes counter minutes older than a day (by the index on "minute"). */
export async function trimCounterMinutes(run: SqlRunner): Promise<number> {
  return run.execute(
    `DELETE FROM "IdempotencyCounterMinute" WHERE "minute" < now() - make_interval(hours => $1)`,
    [COUNTER_MINUTES_KEPT_HOURS],
  );
}

export class Counters {
  private pending = new Map<string, number>();

  increment(scope: string, procedure: string, event: CounterEvent, by = 1): void {
    const k = scope + SEP + procedure + SEP + event;
    this.pending.set(k, (this.pending.get(k) ?? 0) + by);
  }

  /** Deltas not yet flushed (for tests and for a last flush at shutdown). */
  snapshot(): CounterDelta[] {
    return [...this.pending].map(([k, count]) => {
      const [scope, procedure, event] = k.split(SEP) as [string, string, CounterEvent];
      return { scope, procedure, event, count };
    });
  }

  /** Adds the pending deltas to the table in one statement; on failure they are kept for later. */
  async flush(run: SqlRunner): Promise<number> {
    const rows = this.snapshot();
    if (rows.length === 0) return 0;
    this.pending = new Map();
    try {
      const columns = (["scope", "procedure", "event", "count"] as const).map((c) =>
        rows.map((r) => r[c]),
      );
      await run.execute(FLUSH, columns);
      return rows.length;
    } catch (error) {
      for (const r of rows) this.increment(r.scope, r.procedure, r.event, r.count);
      throw error;
    }
  }
}
