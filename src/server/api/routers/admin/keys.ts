// admin.keys.*: the operator's view of the key table. Reads: list (newest first, filtered,
// keyset-paginated: see keyListQuery for the indexes), byId (everything stored for one key, its
// audit trail and timeline), search and resolve (a key found by its value, as a client sent it),
// stuckCount. Actions (bust, release, releaseStuck) are idempotent mutations scoped to "admin":
// the delete, its audit entry and the admin key's completion commit together in `ctx.tx`, and a
// retry of the same admin request replays its first answer.
import { CounterEvent, KeyRemoval } from "@once/idempotency/operator";
import { BULK_RELEASE_BATCH, countStuck, releaseStuckBatch } from "@/server/admin/bulk-release";
import { resolveKeyRef, searchKeys } from "@/server/admin/key-search";
import { listKeys, readKeyById } from "@/server/admin/keys-query";
import { buildTimeline } from "@/server/admin/timeline";
import type { Db } from "@/server/db/client";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { adminIdempotentProcedure, adminProcedure, createTRPCRouter } from "../../trpc";
import { encodeCursor } from "./cursor";
import * as inputs from "./keys.types";
import { removeKeyProcedure } from "./remove-key";
import { auditView, keyDetail, keySummary, KEY_TARGET } from "./view";

const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];
/** Keys a bulk release names in its answer. */
const SAMPLE = 10;

/**
 * One key's row, and the audit entries of every row its value had (bust, then used again), found
 * by (tenant, value): a busted key is gone from the table but not from the audit log.
 */
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
  const history =
    scope && key
      ? await db.auditEntry.findMany({
          where: { targetType: KEY_TARGET, targetScope: scope, targetKey: key },
          orderBy: newestFirst,
          take: 100,
        })
      : audit;
  // The trail and the timeline tell the same history: every row the value had, not only this one.
  return {
    key: row ? keyDetail(row) : null,
    audit: history.map(auditView),
    timeline: buildTimeline(row, history),
  };
}

export const keysRouter = createTRPCRouter({
  list: adminProcedure.input(inputs.listKeysInput).query(async ({ ctx, input }) => {
    const { status, tenant: scope, procedure: procedurePrefix, stuck, cursor, limit } = input;
    const filters = { status, scope, procedurePrefix, stuck };
    const page = await listKeys(ctx.db, filters, cursor ?? null, limit);
    return { items: page.items.map(keySummary), nextCursor: encodeCursor(page.nextCursor) };
  }),

  byId: adminProcedure.input(inputs.keyByIdInput).query(async ({ ctx, input }) => {
    const found = await readKeyHistory(ctx.db, input.id);
    if (!found) throw new AppError(Reason.KEY_NOT_FOUND, "No idempotency key with this id");
    return found;
  }),

  /** Removes a COMPLETED or FAILED key, or a stuck PROCESSING one, so the next request runs anew. */
  bust: removeKeyProcedure(KeyRemoval.BUST),
  /** Frees a stuck lease (PROCESSING, expired) by hand, before the sweeper would. */
  release: removeKeyProcedure(KeyRemoval.RELEASE),

  /** The dashboard's search box: the value or its start, across tenants or within one. */
  search: adminProcedure.input(inputs.searchKeysInput).query(async ({ ctx, input }) => {
    const found = await searchKeys(ctx.db, input.q, input.tenant, input.limit);
    return { items: found.items.map(keySummary), more: found.more };
  }),

  /** What /admin/keys/<ref> names (a row id or a value): the page opens one match or lists them. */
  resolve: adminProcedure.input(inputs.resolveKeyInput).query(async ({ ctx, input }) => {
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
            orderBy: newestFirst,
            take: 20,
          });
    return { items: rows.map(keySummary), removed: removed.map(auditView) };
  }),

  /**
   * The stuck leases a filter selects, released in one bounded batch with one reason, each key
   * audited. A retry replays its first answer instead of releasing the next batch; the dashboard
   * calls it again (with a new key) while `remaining` > 0.
   */
  releaseStuck: adminIdempotentProcedure(inputs.releaseStuckInput).mutation(
    async ({ ctx, input }) => {
      const filters = { scope: input.tenant, procedurePrefix: input.procedure };
      const released = await releaseStuckBatch(ctx.tx, filters, BULK_RELEASE_BATCH, {
        actor: ctx.principal.email,
        reason: input.reason,
        targetType: KEY_TARGET,
      });
      // Counted before the commit, as a single release is: the audit log is the exact record.
      for (const k of released)
        ctx.engine.counters.increment(k.scope, k.procedure, CounterEvent.RELEASED);
      return {
        released: released.length,
        remaining: await countStuck(ctx.tx, filters),
        sample: released.slice(0, SAMPLE).map((k) => ({ id: k.id, tenant: k.scope, key: k.key })),
      };
    },
  ),

  /** How many stuck leases the filter selects now: what the bulk release would free. */
  stuckCount: adminProcedure.input(inputs.stuckCountInput).query(async ({ ctx, input }) => ({
    stuck: await countStuck(ctx.db, { scope: input.tenant, procedurePrefix: input.procedure }),
  })),
});
