import { publicProcedure, createTRPCRouter } from "../trpc";
import type { Prisma } from "../../../generated/prisma/client";
import { poolOf, preparesStatements, type Db } from "../../db/client";

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

/** productSelect as SQL: the same columns in the same order, so the answer's bytes are the same. */
const LIST_SQL = `SELECT "id", "sku", "name", "description", "priceCents", "currency", "stock"
  FROM "Product" ORDER BY "sku" ASC`;

/**
 * The catalog, by sku. It is the one public read and the busiest one (every page of the shop asks
 * for it), so it goes straight to the pg pool under Prisma's adapter when there is one, as the
 * caller's lookup does (src/server/auth/principal.ts): Prisma's per-statement CPU was most of what
 * a served read cost the server beyond tRPC's (npm run bench:http, route costs). Without a pool
 * (another adapter) it is Prisma's findMany with the same columns and order.
 */
export async function listCatalog(db: Db): Promise<CatalogProduct[]> {
  const pool = poolOf(db);
  if (!pool) return db.product.findMany({ select: productSelect, orderBy: { sku: "asc" } });
  const name = preparesStatements(db) ? "app_catalog_list" : undefined; // planned once per connection
  return (await pool.query<CatalogProduct>({ name, text: LIST_SQL })).rows;
}

export const catalogRouter = createTRPCRouter({
  list: publicProcedure.query(({ ctx }) => listCatalog(ctx.db)),
});
