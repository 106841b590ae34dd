-- The example's own table. (The engine's table comes from @once/idempotency/sql/migration.sql,
-- applied first by src/migrate.ts.)
CREATE TABLE "Transfer" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account" TEXT NOT NULL,
    "toAccount" TEXT NOT NULL,
    "amountCents" INTEGER NOT NULL,
    "requestKey" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Transfer_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Transfer_account_requestKey_key" ON "Transfer"("account", "requestKey");
