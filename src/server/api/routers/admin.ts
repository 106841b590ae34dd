// admin.*: the operator's view of the engine. One concern per file under ./admin (the keys' inputs
// in keys.types.ts, the rows they answer in view.ts); every procedure is admin-only (a tenant token
// is 403), and every action that changes something is itself an idempotent mutation that writes an
// audit entry.
import { z } from "zod";
import { readCounterSeries } from "@/server/admin/counter-series";
import { readStats } from "@/server/admin/stats";
import { text } from "@/shared/text";
import { adminProcedure, createTRPCRouter } from "../trpc";
import { before, cursorSchema, page } from "./admin/cursor";
import { keysRouter } from "./admin/keys";
import { listOutboxProcedure, retryOutboxProcedure } from "./admin/outbox";
import { reconciliationRouter } from "./admin/reconciliation";
import { sessionsRouter } from "./admin/sessions";
import { auditView } from "./admin/view";

const optionalText = (max: number) => text().trim().min(1).max(max).optional();

/**
 * Every manual action (bust, release, outbox retry, …), newest first, filtered by actor, action,
 * key value (exactly as the client sent it, and tenant), or target. Each filter has an index on
 * (column, createdAt DESC) (migration 0005), so a page reads `limit` entries.
 */
const listAudit = adminProcedure
  .input(
    z.object({
      actor: optionalText(200),
      action: optionalText(100),
      key: optionalText(255),
      tenant: optionalText(100),
      targetType: optionalText(100),
      targetId: optionalText(255),
      cursor: cursorSchema.optional(),
      limit: z.number().int().min(1).max(200).default(50),
    }),
  )
  .query(async ({ ctx, input: { key, tenant, cursor, limit, ...exact } }) => {
    const rows = await ctx.db.auditEntry.findMany({
      where: { ...exact, targetKey: key, targetScope: tenant, ...before(cursor) },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: limit + 1,
    });
    const { items, nextCursor } = page(rows, limit);
    return { items: items.map(auditView), nextCursor };
  });

/**
 * Counts per minute for the last 24 h, for one tenant and one or every procedure. Per tenant on
 * purpose: across every tenant it would read every row of the day (216 000 at the bench's size,
 * 150 ms), which no answer under 100 ms can.
 */
const counterSeries = adminProcedure
  .input(z.object({ tenant: optionalText(100).unwrap(), procedure: optionalText(200) }))
  .query(({ ctx, input }) =>
    readCounterSeries(ctx.db, { scope: input.tenant, procedure: input.procedure }),
  );

export const adminRouter = createTRPCRouter({
  keys: keysRouter,
  outbox: createTRPCRouter({ list: listOutboxProcedure, retry: retryOutboxProcedure }),
  reconciliation: reconciliationRouter,
  audit: createTRPCRouter({ list: listAudit }),
  sessions: sessionsRouter,
  stats: adminProcedure.query(({ ctx }) => readStats(ctx.db, ctx.engine, ctx.refusals)),
  counters: createTRPCRouter({ series: counterSeries }),
});
