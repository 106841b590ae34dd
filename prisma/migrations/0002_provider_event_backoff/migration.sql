-- The provider retries an event the webhook refused with a growing wait, as real providers do,
-- instead of every poll: how many times it tried, and when it may try next.

-- AlterTable
ALTER TABLE "ProviderEvent" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN "lastError" TEXT;

-- DropIndex
DROP INDEX "ProviderEvent_deliveredAt_idx";

-- CreateIndex
CREATE INDEX "ProviderEvent_deliveredAt_nextAttemptAt_idx" ON "ProviderEvent"("deliveredAt", "nextAttemptAt");
