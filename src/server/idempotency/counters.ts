// Counters per scope, procedure and event. Counting in memory and flushing deltas keeps a write
// off every request; the table adds up every instance's flushes, and the dashboard and
// /api/metrics read it.
import { Prisma, type PrismaClient } from "../../generated/prisma/client";
import type { CounterEvent } from "./constants";

const SEP = "\u0000";

export class Counters {
  private pending = new Map<string, number>();

  increment(scope: string, procedure: string, event: CounterEvent, by = 1): void {
    const k = [scope, procedure, event].join(SEP);
    this.pending.set(k, (this.pending.get(k) ?? 0) + by);
  }

  /** Deltas not yet flushed (for tests and for a last flush at shutdown). */
  snapshot(): { scope: string; procedure: string; event: string; count: number }[] {
    return [...this.pending].map(([k, count]) => {
      const [scope, procedure, event] = k.split(SEP) as [string, string, string];
      return { scope, procedure, event, count };
    });
  }

  /** Adds the pending deltas to the table in one statement; on failure they are kept for later. */
  async flush(db: PrismaClient): Promise<number> {
    const rows = this.snapshot();
    if (rows.length === 0) return 0;
    this.pending = new Map();
    try {
      const values = rows.map((r) => Prisma.sql`(${r.scope}, ${r.procedure}, ${r.event}, ${r.count}::bigint, now())`);
      await db.$executeRaw`
        INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count", "updatedAt")
        VALUES ${Prisma.join(values)}
        ON CONFLICT ("scope", "procedure", "event")
        DO UPDATE SET "count" = "IdempotencyCounter"."count" + EXCLUDED."count", "updatedAt" = now()`;
      return rows.length;
    } catch (error) {
      for (const r of rows) this.increment(r.scope, r.procedure, r.event as CounterEvent, r.count);
      throw error;
    }
  }
}
