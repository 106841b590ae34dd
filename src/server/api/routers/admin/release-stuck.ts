// admin.keys.releaseStuck: the stuck leases a filter selects, released in one bounded batch with
// one reason, each key audited. Like every admin action it is an idempotent mutation scoped to
// "admin": the deletes, their audit entries and the admin key's completion commit together, and a
// retry of the same request replays its first answer instead of releasing the next batch. The
// dashboard calls it again (with a new key) while `remaining` > 0.
import { adminIdempotentProcedure, adminProcedure } from "../../trpc";
import { CounterEvent } from "@once/idempotency/operator";
import { BULK_RELEASE_BATCH, countStuck, releaseStuckBatch } from "@/server/admin/bulk-release";
import { releaseStuckInput, stuckCountInput } from "./keys.types";
import { KEY_TARGET } from "./view";

const SAMPLE = 10;

export const releaseStuckProcedure = adminIdempotentProcedure(releaseStuckInput).mutation(
  async ({ ctx, input }) => {
    const filters = { scope: input.tenant, procedurePrefix: input.procedure };
    const released = await releaseStuckBatch(ctx.tx, filters, BULK_RELEASE_BATCH, {
      actor: ctx.principal.email,
      reason: input.reason,
      targetType: KEY_TARGET,
    });
    // Counted before the commit, as a single release is: the audit log is the exact record.
    const counters = ctx.engine.counters;
    for (const k of released) counters.increment(k.scope, k.procedure, CounterEvent.RELEASED);
    return {
      released: released.length,
      remaining: await countStuck(ctx.tx, filters),
      sample: released.slice(0, SAMPLE).map((k) => ({ id: k.id, tenant: k.scope, key: k.key })),
    };
  },
);

/** How many stuck leases the filter selects now: what the bulk release would free. */
export const stuckCountProcedure = adminProcedure
  .input(stuckCountInput)
  .query(async ({ ctx, input }) => ({
    stuck: await countStuck(ctx.db, { scope: input.tenant, procedurePrefix: input.procedure }),
  }));
