// admin.audit.list: every manual action (bust, release, outbox retry), newest first.
import { z } from "zod";
import { adminProcedure } from "../../trpc";
import { cursorSchema } from "./cursor";
import { before, page } from "./reconciliation";
import { auditView } from "./view";

export const listAuditInput = z.object({
  targetType: z.string().max(100).optional(),
  targetId: z.string().max(255).optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const listAuditProcedure = adminProcedure.input(listAuditInput).query(async ({ ctx, input }) => {
  const rows = await ctx.db.auditEntry.findMany({
    where: {
      ...(input.targetType ? { targetType: input.targetType } : {}),
      ...(input.targetId ? { targetId: input.targetId } : {}),
      ...before(input.cursor),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
  });
  const { items, nextCursor } = page(rows, input.limit);
  return { items: items.map(auditView), nextCursor };
});
