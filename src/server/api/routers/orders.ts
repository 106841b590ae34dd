import { z } from "zod";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { createTRPCRouter, tenantProcedure } from "../trpc";
import { orderSelect } from "../../checkout/order-select";

export const ordersRouter = createTRPCRouter({
  list: tenantProcedure
    .input(
      z
        .object({
          limit: z.number().int().min(1).max(100).default(50),
          cursor: z.uuid().optional(),
        })
        .strict()
        .default({ limit: 50 }),
    )
    .query(async ({ ctx, input }) => {
      // The cursor must be one of the caller's own orders. Prisma pages from the cursor row's
      // (createdAt, id) whoever owns it, so another tenant's order id answered with the caller's
      // orders older than it: proof that it exists, and roughly when it was placed. Another
      // tenant's id and an unknown one get the same refusal.
      if (input.cursor) {
        const own = await ctx.db.order.findFirst({
          where: { id: input.cursor, tenantId: ctx.tenantId },
          select: { id: true },
        });
        if (!own)
          throw new AppError(
            Reason.INVALID_CURSOR,
            "This cursor is not one of your orders: start from the first page",
          );
      }
      const rows = await ctx.db.order.findMany({
        where: { tenantId: ctx.tenantId },
        select: orderSelect,
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: input.limit + 1,
        ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
      });
      const hasMore = rows.length > input.limit;
      const items = hasMore ? rows.slice(0, input.limit) : rows;
      return { items, nextCursor: hasMore ? items[items.length - 1]!.id : null };
    }),

  byId: tenantProcedure.input(z.object({ id: z.uuid() }).strict()).query(async ({ ctx, input }) => {
    // Another tenant's order is indistinguishable from a missing one: 404 either way.
    const order = await ctx.db.order.findFirst({
      where: { id: input.id, tenantId: ctx.tenantId },
      select: orderSelect,
    });
    if (!order)
      throw new AppError(Reason.ORDER_NOT_FOUND, "No order with this id belongs to your account");
    return order;
  }),
});
