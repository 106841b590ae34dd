import { publicProcedure, createTRPCRouter } from "../trpc";
import type { Prisma } from "../../../generated/prisma/client";
import { readOnPool, type Db } from "../../db/client";
import { CATALOG_LIST_SQL } from "../../catalog/list-statement";

export const productSelect = {
  id: true,
  sku: true,
  name: true,
  description: true,
  priceCents: true,
  currency: true,
  stock: true,
} satisfies Prisma.ProductSelect;

/** A product as the catalog lists it: productSelect's columns, in its order. */
export type CatalogProduct = Prisma.ProductGetPayload<{ select: typeof productSelect }>;

/**
 * The catalog, by sku. It is the one public read and the busiest one (every page of the shop asks
 * for it), so it goes straight to the pg pool, as the caller's lookup does
 * (src/server/auth/principal.ts): Prisma's per-statement CPU was most of what a served read cost
 * the server beyond tRPC's (npm run bench:http, route costs). Without a pool (another adapter) it
 * is Prisma's findMany with the same columns and order.
 */
export async function listCatalog(db: Db): Promise<CatalogProduct[]> {
  return (
    (await readOnPool<CatalogProduct>(db, "app_catalog_list", CATALOG_LIST_SQL)) ??
    db.product.findMany({ select: productSelect, orderBy: { sku: "asc" } })
  );
}

export const catalogRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listCatalog(ctx.db)),
});
