-- @once/idempotency: the key store. Apply once to the database your Prisma client uses (as a
-- migration of your own: prisma/migrations/<NNNN>_idempotency/migration.sql), and paste the models
-- of prisma/idempotency.prisma into your schema.prisma.

CREATE TYPE "IdempotencyStatus" AS ENUM ('PROCESSING', 'COMPLETED', 'FAILED');

CREATE TABLE "IdempotencyKey" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "scope" TEXT NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "procedure" TEXT NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "status" "IdempotencyStatus" NOT NULL,
    "leaseToken" UUID,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "responseContentType" TEXT,
    -- A body that is not UTF-8 text, as bytes; the answer's replayed headers; the size of a body
    -- too large to store (kept without it).
    "responseBytes" BYTEA,
    "responseHeaders" JSONB,
    "responseOmittedBytes" INTEGER,
    -- Set by a request waiting on the key (Prefer: wait): only then does its settle send a NOTIFY.
    "awaited" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "IdempotencyKey_pkey" PRIMARY KEY ("id")
);

-- The unique constraint that decides every race.
CREATE UNIQUE INDEX "IdempotencyKey_scope_key_key" ON "IdempotencyKey"("scope", "key");
-- Stuck leases and the sweeper.
CREATE INDEX "IdempotencyKey_status_leaseExpiresAt_idx" ON "IdempotencyKey"("status", "leaseExpiresAt");
-- The reaper, and the live-key count per scope.
CREATE INDEX "IdempotencyKey_expiresAt_idx" ON "IdempotencyKey"("expiresAt");
CREATE INDEX "IdempotencyKey_scope_expiresAt_idx" ON "IdempotencyKey"("scope", "expiresAt");

-- Counters, flushed from each instance as deltas.
CREATE TABLE "IdempotencyCounter" (
    "scope" TEXT NOT NULL,
    "procedure" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "count" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "IdempotencyCounter_pkey" PRIMARY KEY ("scope", "procedure", "event")
);

-- The same counters per minute, for charts of the last 24 h (older minutes are trimmed by a job).
CREATE TABLE "IdempotencyCounterMinute" (
    "scope" TEXT NOT NULL,
    "procedure" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "count" BIGINT NOT NULL,
    CONSTRAINT "IdempotencyCounterMinute_pkey" PRIMARY KEY ("scope", "procedure", "event", "minute")
);
CREATE INDEX "IdempotencyCounterMinute_minute_idx" ON "IdempotencyCounterMinute"("minute");
