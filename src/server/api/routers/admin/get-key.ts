// admin.keys.byId: everything stored for one key, its audit trail and its timeline. A busted key is
// gone from the table but not from the audit log: then `key` is null and the trail says who
// removed it. The trail and the timeline cover every row the key's value had (bust, then used
// again).
import { adminProcedure } from "../../trpc";
import type { Db } from "@/server/db/client";
import { readKeyById } from "@/server/admin/keys-query";
import { buildTimeline } from "@/server/admin/timeline";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { keyByIdInput } from "./keys.types";
import { auditView, keyDetail, KEY_TARGET } from "./view";

const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/** Audit entries of every row this key's value had, found by (tenant, value). */
function historyOf(db: Db, scope: string, key: string) {
  return db.auditEntry.findMany({
    where: { targetType: KEY_TARGET, targetScope: scope, targetKey: key },
    orderBy: newestFirst,
    take: 100,
  });
}

async function readKeyHistory(db: Db, id: string) {
  const [row, audit] = await Promise.all([
    readKeyById(db, id),
    db.auditEntry.findMany({
      where: { targetType: KEY_TARGET, targetId: id },
      orderBy: newestFirst,
      take: 100,
    }),
  ]);
  if (!row && audit.length === 0) return null;
  const scope = row?.scope ?? audit[0]?.targetScope;
  const key = row?.key ?? audit[0]?.targetKey;
  const history = scope && key ? await historyOf(db, scope, key) : audit;
  // The trail and the timeline tell the same history: every row the value had, not only this one.
  return {
    key: row ? keyDetail(row) : null,
    audit: history.map(auditView),
    timeline: buildTimeline(row, history),
  };
}

export const getKeyProcedure = adminProcedure.input(keyByIdInput).query(async ({ ctx, input }) => {
  const found = await readKeyHistory(ctx.db, input.id);
  if (!found) throw new AppError(Reason.KEY_NOT_FOUND, "No idempotency key with this id");
  return found;
});
