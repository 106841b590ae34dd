// admin.outbox.list and admin.outbox.retry: the payment outbox as the operator sees it, and a
// dead-lettered message sent back to the worker (audited).
import { z } from "zod";
import { adminIdempotentProcedure, adminProcedure } from "../../trpc";
import type { OutboxMessage, Prisma } from "@/generated/prisma/client";
import { before, cursorSchema, iso, page } from "./cursor";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { reasonSchema } from "./keys.types";
import { OUTBOX_TARGET, writeAudit } from "./view";
import { AuditAction } from "@/shared/audit-actions";

const listOutboxInput = z.object({
  status: z.enum(["PENDING", "DELIVERED", "DEAD"]).optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
const retryOutboxInput = z.object({ id: z.uuid(), reason: reasonSchema });

const outboxSelect = {
  id: true,
  topic: true,
  aggregateId: true,
  idempotencyKey: true,
  status: true,
  attempts: true,
  nextAttemptAt: true,
  lastError: true,
  deliveredAt: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.OutboxMessageSelect;

function outboxView(m: Pick<OutboxMessage, keyof typeof outboxSelect>) {
  return {
    ...m,
    nextAttemptAt: m.nextAttemptAt.toISOString(),
    deliveredAt: iso(m.deliveredAt),
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

/** Newest first on (createdAt, id): OutboxMessage_createdAt_id_idx. */
export const listOutboxProcedure = adminProcedure
  .input(listOutboxInput)
  .query(async ({ ctx, input }) => {
    const rows = await ctx.db.outboxMessage.findMany({
      where: { ...(input.status ? { status: input.status } : {}), ...before(input.cursor) },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: input.limit + 1,
      select: outboxSelect,
    });
    const { items, nextCursor } = page(rows, input.limit);
    return { items: items.map(outboxView), nextCursor };
  });

/**
 * DEAD → PENDING, due now, with its attempts reset so the worker's bounded retries apply again. The
 * WHERE re-checks DEAD in the same statement, so a message the worker is delivering is never reset.
 */
export const retryOutboxProcedure = adminIdempotentProcedure(retryOutboxInput).mutation(
  async ({ ctx, input }) => {
    const before = await ctx.tx.outboxMessage.findUnique({
      where: { id: input.id },
      select: outboxSelect,
    });
    if (!before) throw new AppError(Reason.OUTBOX_NOT_FOUND, "No outbox message with this id");
    // Due at the database's now(), like every time the worker compares against.
    const updated = await ctx.tx.$executeRaw`
    UPDATE "OutboxMessage"
    SET "status" = 'PENDING', "attempts" = 0, "nextAttemptAt" = now(), "lockedUntil" = NULL, "updatedAt" = now()
    WHERE "id" = ${input.id}::uuid AND "status" = 'DEAD'`;
    if (updated !== 1) {
      throw new AppError(
        Reason.OUTBOX_NOT_DEAD,
        `This message is ${before.status}, not dead-lettered: only a dead-lettered message can be retried.`,
      );
    }
    const auditId = await writeAudit(ctx.tx, {
      actor: ctx.principal.email,
      action: AuditAction.OUTBOX_RETRY,
      targetType: OUTBOX_TARGET,
      targetId: before.id,
      reason: input.reason,
      details: { before: outboxView(before) },
    });
    return {
      id: before.id,
      status: "PENDING" as const,
      previousAttempts: before.attempts,
      auditId,
    };
  },
);
