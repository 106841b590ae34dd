import { createTRPCRouter, publicProcedure } from "../trpc";

export const sessionRouter = createTRPCRouter({
  /** Who the browser is signed in as (null when signed out). */
  me: publicProcedure.query(async ({ ctx }) => {
    const p = await ctx.getPrincipal();
    return p ? { name: p.name, email: p.email, role: p.role, tenantId: p.tenantId } : null;
  }),
});
