import { z } from "zod";

import {
  anonymousProcedure,
  createTRPCRouter,
  idempotency,
  publicProcedure,
} from "~/server/api/trpc";

export const postRouter = createTRPCRouter({
  hello: publicProcedure
    .input(z.object({ text: z.string() }))
    .query(({ input }) => {
      return {
        greeting: `Hello ${input.text}`,
      };
    }),

  // Idempotent: written through ctx.tx, in the transaction that also completes the key.
  create: anonymousProcedure
    .input(z.object({ name: z.string().min(1) }))
    .use(idempotency)
    .mutation(async ({ ctx, input }) => {
      return ctx.tx.post.create({
        data: {
          name: input.name,
        },
      });
    }),

  getLatest: publicProcedure.query(async ({ ctx }) => {
    const post = await ctx.db.post.findFirst({
      orderBy: { createdAt: "desc" },
    });

    return post ?? null;
  }),
});
