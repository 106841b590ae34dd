import { publicProcedure, createTRPCRouter } from "../trpc";
import type { Prisma } from "../../../generated/prisma/client";

export const productSelect = {
  id: true,
  sku: true,
  name: true,
  description: true,
  priceCents: true,
  currency: true,
  stock: true,
} satisfies Prisma.ProductSelect;

export const catalogRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) =>
    ctx.db.product.findMany({ select: productSelect, orderBy: { sku: "asc" } }),
  ),
});
