// The bench's stand-in for a business mutation: one insert into "TestEffect", reachable through
// the app's own tRPC stack (auth, the idempotency middleware) so a retry's whole path is measured.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { createTRPCRouter, idempotentProcedure } from "../../src/server/api/trpc";

export const EFFECTS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "TestEffect" (
  "id" SERIAL PRIMARY KEY, "scope" TEXT NOT NULL, "value" TEXT NOT NULL, "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now())`;

export const testRouter = createTRPCRouter({
  // holdMs: a handler that takes that long inside its transaction, so a duplicate arrives while
  // the first request is in flight (the Prefer: wait phase).
  effect: idempotentProcedure(
    z.object({ value: z.string().min(1), holdMs: z.number().int().min(0).max(5_000).optional() }),
  ).mutation(async ({ ctx, input }) => {
    const [row] = await ctx.tx.$queryRaw<{ id: number }[]>`
      INSERT INTO "TestEffect" ("scope", "value") VALUES (${ctx.tenantId}, ${input.value}) RETURNING "id"`;
    if (input.holdMs) await sleep(input.holdMs);
    return { effectId: row!.id, value: input.value };
  }),
});
