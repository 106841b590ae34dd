-- Once beyond the key: an order is unique per (tenant, checkout key), so a re-execution of an intent
-- whose key was busted, expired or lost finds the order it already made instead of making another.
--
-- "intentKey" holds the checkout's idempotency key for the one order of that intent. It is a new
-- column rather than a constraint on "idempotencyKey" because a database that ran before this
-- migration may already hold duplicates (the very bug this closes): the earliest order of each
-- (tenant, key) takes the intent, later duplicates keep "intentKey" NULL (NULLs never collide in a
-- unique index) and their shared "idempotencyKey" lets reconciliation flag them (SHARED_INTENT).

-- AlterEnum
ALTER TYPE "FindingKind" ADD VALUE 'SHARED_INTENT';

-- AlterTable
ALTER TABLE "Order" ADD COLUMN "intentKey" TEXT;

-- Backfill: the first order of each intent owns it.
UPDATE "Order" AS o SET "intentKey" = o."idempotencyKey"
FROM (
    SELECT DISTINCT ON ("tenantId", "idempotencyKey") "id"
    FROM "Order"
    ORDER BY "tenantId", "idempotencyKey", "createdAt", "id"
) AS first
WHERE o."id" = first."id";

-- CreateIndex
CREATE UNIQUE INDEX "Order_tenantId_intentKey_key" ON "Order"("tenantId", "intentKey");
