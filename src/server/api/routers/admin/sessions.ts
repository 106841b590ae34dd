// admin.sessions.*: the operator sees who is signed in and ends a session, or every session of an
// account (a lost laptop, a copied cookie). Ending is an idempotent mutation with a reason,
// written to the audit log like every other manual action.
import { z } from "zod";
import { text } from "@/shared/text";
import { adminIdempotentProcedure, adminProcedure, createTRPCRouter } from "../../trpc";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { reasonSchema } from "./keys.types";
import { writeAudit } from "./view";
import { AuditAction } from "@/shared/audit-actions";

const email = text().trim().toLowerCase().min(1).max(320);
const listSessionsInput = z.object({
  /** Only the sessions of accounts whose e-mail address contains this ("ops@", "example.org"). */
  email: email.optional(),
  limit: z.number().int().min(1).max(200).default(100),
});
const endSessionInput = z.object({ id: z.uuid(), reason: reasonSchema });
const endAccountSessionsInput = z.object({ email, reason: reasonSchema });

/** Live sessions (not expired by the database's clock), newest first. */
const list = adminProcedure.input(listSessionsInput).query(async ({ ctx, input }) => {
  const rows = await ctx.db.session.findMany({
    where: {
      expiresAt: { gt: new Date() },
      ...(input.email ? { user: { email: { contains: input.email } } } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit,
    select: {
      id: true,
      userAgent: true,
      createdAt: true,
      expiresAt: true,
      user: { select: { email: true, role: true } },
    },
  });
  return rows.map((r) => ({
    id: r.id,
    email: r.user.email,
    role: r.user.role,
    userAgent: r.userAgent,
    createdAt: r.createdAt.toISOString(),
    expiresAt: r.expiresAt.toISOString(),
  }));
});

const end = adminIdempotentProcedure(endSessionInput).mutation(async ({ ctx, input }) => {
  const [ended] = await ctx.tx.$queryRaw<{ id: string; email: string }[]>`
    DELETE FROM "Session" s USING "User" u
    WHERE s."id" = ${input.id}::uuid AND u."id" = s."userId"
    RETURNING s."id"::text AS "id", u."email"`;
  if (!ended) throw new AppError(Reason.SESSION_NOT_FOUND, "No live session with this id");
  const auditId = await writeAudit(ctx.tx, {
    actor: ctx.principal.email,
    action: AuditAction.SESSION_END,
    targetType: "session",
    targetId: ended.id,
    reason: input.reason,
    details: { email: ended.email },
  });
  return { ended: 1, auditId };
});

const endAll = adminIdempotentProcedure(endAccountSessionsInput).mutation(
  async ({ ctx, input }) => {
    const user = await ctx.tx.user.findUnique({
      where: { email: input.email },
      select: { id: true },
    });
    const ended = user
      ? (await ctx.tx.session.deleteMany({ where: { userId: user.id } })).count
      : 0;
    const auditId = await writeAudit(ctx.tx, {
      actor: ctx.principal.email,
      action: AuditAction.SESSION_END_ALL,
      targetType: "user",
      targetId: input.email,
      reason: input.reason,
      details: { ended },
    });
    return { ended, auditId };
  },
);

export const sessionsRouter = createTRPCRouter({ list, end, endAll });
