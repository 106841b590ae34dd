// admin.keys.search and admin.keys.resolve: a key found by its value, as a client sent it.
// search: the dashboard's search box (the value or its start, across tenants or within one).
// resolve: what /admin/keys/<ref> names (a row id or a value); the page opens the one match, or
// lists several (one value in several tenants).
import { adminProcedure } from "../../trpc";
import { resolveKeyRef, searchKeys } from "@/server/admin/key-search";
import { resolveKeyInput, searchKeysInput } from "./keys.types";
import { auditView, keySummary, KEY_TARGET } from "./view";

export const searchKeysProcedure = adminProcedure
  .input(searchKeysInput)
  .query(async ({ ctx, input }) => {
    const found = await searchKeys(ctx.db, input.q, input.tenant, input.limit);
    return { items: found.items.map(keySummary), more: found.more };
  });

export const resolveKeyProcedure = adminProcedure
  .input(resolveKeyInput)
  .query(async ({ ctx, input }) => {
    const rows = await resolveKeyRef(ctx.db, input.ref, input.tenant);
    // A value with no row now may have had one: its bust or release is in the audit log.
    const removed =
      rows.length > 0
        ? []
        : await ctx.db.auditEntry.findMany({
            where: {
              targetType: KEY_TARGET,
              OR: [{ targetKey: input.ref }, { targetId: input.ref }],
              ...(input.tenant ? { targetScope: input.tenant } : {}),
            },
            orderBy: [{ createdAt: "desc" }, { id: "desc" }],
            take: 20,
          });
    return { items: rows.map(keySummary), removed: removed.map(auditView) };
  });
