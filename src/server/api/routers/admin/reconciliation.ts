// admin.reconciliation.list: the reconciliation job's findings, newest first;
// admin.reconciliation.resolve: one marked resolved with what was done (audited).
import { z } from "zod";
import { adminIdempotentProcedure, adminProcedure, createTRPCRouter } from "../../trpc";
import type { Prisma } from "@/generated/prisma/client";
import { resolveFinding } from "@/payments";
import { before, cursorSchema, iso, page } from "./cursor";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { reasonSchema } from "./keys.types";

const listReconciliationInput = z.object({
  /** Only findings nobody marked resolved. */
  open: z.boolean().optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

const findingSelect = {
  id: true,
  kind: true,
  orderId: true,
  chargeIds: true,
  details: true,
  createdAt: true,
  resolvedAt: true,
  resolution: true,
  resolvedBy: true,
} satisfies Prisma.ReconciliationFindingSelect;

const list = adminProcedure.input(listReconciliationInput).query(async ({ ctx, input }) => {
  const rows = await ctx.db.reconciliationFinding.findMany({
    where: { ...(input.open ? { resolvedAt: null } : {}), ...before(input.cursor) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit + 1,
    select: findingSelect,
  });
  const { items, nextCursor } = page(rows, input.limit);
  return {
    items: items.map((f) => ({
      ...f,
      details: f.details ?? null,
      createdAt: f.createdAt.toISOString(),
      resolvedAt: iso(f.resolvedAt),
    })),
    nextCursor,
  };
});

const resolveReconciliationInput = z.object({ id: z.uuid(), note: reasonSchema });

/**
 * Open → resolved, with the operator's note, and an audit entry. A finding already resolved is
 * answered as it is (who resolved it, when), not resolved twice.
 */
const resolve = adminIdempotentProcedure(resolveReconciliationInput).mutation(
  async ({ ctx, input }) => {
    const outcome = await resolveFinding(ctx.tx, {
      id: input.id,
      note: input.note,
      actor: ctx.principal.email,
    });
    if (outcome.status === "not-found")
      throw new AppError(Reason.NOT_FOUND, "No reconciliation finding with this id");
    return {
      id: outcome.id,
      status: outcome.status,
      resolvedAt: outcome.resolvedAt.toISOString(),
      resolvedBy: outcome.status === "resolved" ? ctx.principal.email : outcome.resolvedBy,
      auditId: outcome.status === "resolved" ? outcome.auditId : null,
    };
  },
);

export const reconciliationRouter = createTRPCRouter({ list, resolve });
