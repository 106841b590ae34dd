// admin.audit.list: every manual action (bust, release, outbox retry), newest first, filtered by
// actor, action, key value (and tenant), or target. Each filter has an index on (column, createdAt
// DESC) (migration 0005), so a page reads `limit` entries.
import { z } from "zod";
import { adminProcedure } from "../../trpc";
import { before, cursorSchema, page } from "./cursor";
import { auditView } from "./view";
import { text } from "@/shared/text";

const optionalText = (max: number) => text().trim().min(1).max(max).optional();

const listAuditInput = z.object({
  actor: optionalText(200),
  action: optionalText(100),
  /** An idempotency key's value, exactly as the client sent it. */
  key: optionalText(255),
  tenant: optionalText(100),
  targetType: optionalText(100),
  targetId: optionalText(255),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const listAuditProcedure = adminProcedure
  .input(listAuditInput)
  .query(async ({ ctx, input }) => {
    const rows = await ctx.db.auditEntry.findMany({
      where: {
        ...(input.actor ? { actor: input.actor } : {}),
        ...(input.action ? { action: input.action } : {}),
        ...(input.key ? { targetKey: input.key } : {}),
        ...(input.tenant ? { targetScope: input.tenant } : {}),
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
