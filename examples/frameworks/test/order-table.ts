// The table Prisma would make for the Order model (its migrate engine cannot be downloaded here).
export const ORDER_TABLE = `CREATE TABLE "Order" ("id" UUID PRIMARY KEY DEFAULT gen_random_uuid(), "owner" TEXT NOT NULL, "item" TEXT NOT NULL, "quantity" INTEGER NOT NULL, "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT now())`;
