// The catalog's one read, as SQL: the columns of the router's `productSelect` in its order, by
// sku, so the answer's bytes are Prisma's findMany's (src/server/api/routers/foundation.test.ts
// compares them). The bench's floor runs the very same text by hand
// (lab/bench/http/floor-server.ts).
export const CATALOG_LIST_SQL = `SELECT "id", "sku", "name", "description", "priceCents", "currency", "stock"
  FROM "Product" ORDER BY "sku" ASC`;
