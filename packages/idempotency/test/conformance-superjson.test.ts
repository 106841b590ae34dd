// The conformance kit against a superjson router, as a T3 app has it: inputs sent and error bodies
// read through the transformer. The engine listens (replay cache on), as a T3 app's does.
import { initTRPC, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { z } from "zod";
import { runConformance, trpcSender } from "../src/conformance/index";
import { reasonOf } from "../src/index";
import { createIdempotencyMiddleware, fetchHttpAccess, type HttpAccess } from "../src/entry/trpc";
import { useTestDatabase, type Db } from "./support/database";
import { CALLERS, effectsTarget } from "./support/conformance";
import { scopeOfAuthorization, useListeningEngine } from "./support/harness";

const t = useTestDatabase();
const listening = useListeningEngine(t);

interface Context {
  db: Db;
  http: HttpAccess;
}

const trpc = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    data: { ...shape.data, stack: undefined, reason: reasonOf(error) },
  }),
});
const authed = trpc.procedure.use(({ ctx, next }) => {
  const scope = scopeOfAuthorization(ctx.http.header("authorization"));
  if (!scope) throw new TRPCError({ code: "UNAUTHORIZED" });
  return next({ ctx: { scope } });
});
const idempotency = createIdempotencyMiddleware(trpc, {
  engine: () => listening.engine,
  scope: (ctx: Context & { scope: string }) => ctx.scope,
  http: (ctx) => ctx.http,
});
const router = trpc.router({
  create: authed
    .input(z.object({ value: z.string(), at: z.date(), refuse: z.boolean().optional() }))
    .use(idempotency)
    .mutation(async ({ ctx, input }) => {
      if (input.refuse)
        throw new TRPCError({
          code: "PRECONDITION_FAILED",
          message: "refused",
          cause: Object.assign(new Error("refused"), { reason: "refused" }),
        });
      const row = await ctx.tx.testEffect.create({
        data: { scope: ctx.scope, value: `${ctx.idempotencyKey}:${input.value}` },
      });
      return { id: row.id, at: input.at };
    }),
});

let n = 0;
runConformance(
  effectsTarget(t, {
    name: "a superjson router",
    transformer: superjson,
    send: trpcSender({
      url: "http://localhost/api/trpc/create",
      callers: CALLERS,
      transformer: superjson,
      fetch: (req) =>
        fetchRequestHandler({
          endpoint: "/api/trpc",
          req,
          router,
          createContext: (opts) => ({ db: t.db, http: fetchHttpAccess(opts) }),
        }),
    }),
    input: () => ({ value: `v${++n}`, at: new Date(1_700_000_000_000 + n) }),
    // Waits for the engine's listener to hear the kit's eviction notice (never evicts itself):
    // the retention check passes only because the notice reaches the engine.
    aged: () => listening.engine.caughtUp(),
    failingInput: () => ({ value: "refused", at: new Date(0), refuse: true }),
  }),
);
