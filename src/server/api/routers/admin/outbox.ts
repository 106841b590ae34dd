// admin.outbox.list and admin.outbox.retry: the payment outbox as the operator sees it, and a
// dead-lettered message sent back to the worker (audited).
import { adminIdempotentProcedure, adminProcedure } from "../../trpc";
import type { OutboxMessage, Prisma } from "@/generated/prisma/client";
import { encodeCursor, iso } from "./cursor";
import { AdminReason, adminError } from "./errors";
import { listOutboxInput, retryOutboxInput, type OutboxView } from "./outbox.types";
import { OUTBOX_TARGET } from "./view";
import { AuditAction } from "@/shared/audit-actions";

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

function outboxView(m: Pick<OutboxMessage, keyof typeof outboxSelect>): OutboxView {
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
    const c = input.cursor;
    const rows = await ctx.db.outboxMessage.findMany({
      where: {
        ...(input.status ? { status: input.status } : {}),
        ...(c
          ? {
              OR: [
                { createdAt: { lt: c.createdAt } },
                { createdAt: c.createdAt, id: { lt: c.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: input.limit + 1,
      select: outboxSelect,
    });
    const items = rows.slice(0, input.limit);
    const last = items[items.length - 1];
    return {
      items: items.map(outboxView),
      nextCursor:
        rows.length > input.limit && last
          ? encodeCursor({ createdAt: last.createdAt, id: last.id })
          : null,
    };
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
    if (!before) throw adminError(AdminReason.OUTBOX_NOT_FOUND, "No outbox message with this id");
    // Due at the database's now(), like every time the worker compares against.
    const updated = await ctx.tx.$executeRaw`
    UPDATE "OutboxMessage"
    SET "status" = 'PENDING', "attempts" = 0, "nextAttemptAt" = now(), "lockedUntil" = NULL, "updatedAt" = now()
    WHERE "id" = ${input.id}::uuid AND "status" = 'DEAD'`;
    if (updated !== 1) {
      throw adminError(
        AdminReason.OUTBOX_NOT_DEAD,
        `This message is ${before.status}, not dead-lettered: only a dead-lettered message can be retried.`,
      );
    }
    const audit = await ctx.tx.auditEntry.create({
      data: {
        actor: ctx.principal.email,
        action: AuditAction.OUTBOX_RETRY,
        targetType: OUTBOX_TARGET,
        targetId: before.id,
        reason: input.reason,
        details: JSON.parse(JSON.stringify({ before: outboxView(before) })),
      },
      select: { id: true },
    });
    return {
      id: before.id,
      status: "PENDING" as const,
      previousAttempts: before.attempts,
      auditId: audit.id,
    };
  },
);
