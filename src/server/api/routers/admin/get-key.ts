// admin.keys.byId: everything stored for one key, and its audit trail. A busted key is gone from
// the table but not from the audit log: then `key` is null and the trail says who removed it.
import { adminProcedure } from "../../trpc";
import { readKeyById } from "./key-queries";
import { AdminReason, adminError } from "./errors";
import { keyByIdInput } from "./keys.types";
import { auditView, keyDetail, KEY_TARGET } from "./view";

export const getKeyProcedure = adminProcedure.input(keyByIdInput).query(async ({ ctx, input }) => {
  const [row, audit] = await Promise.all([
    readKeyById(ctx.db, input.id),
    ctx.db.auditEntry.findMany({
      where: { targetType: KEY_TARGET, targetId: input.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 100,
    }),
  ]);
  if (!row && audit.length === 0) throw adminError(AdminReason.KEY_NOT_FOUND, "No idempotency key with this id");
  return { key: row ? keyDetail(row) : null, audit: audit.map(auditView) };
});
