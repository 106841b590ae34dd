-- The operator's dashboard for an incident (issue 11): counters per minute, a key found by its
-- value, procedures by prefix, and the audit log filtered by actor, action and key.

-- Counters per minute for the last 24 h. The engine's Counters.flush adds its deltas to the
-- current minute's row; a cleanup job deletes minutes older than 24 h (by the index on "minute").
-- CreateTable
CREATE TABLE "IdempotencyCounterMinute" (
    "scope" TEXT NOT NULL,
    "procedure" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "IdempotencyCounterMinute_pkey" PRIMARY KEY ("scope","procedure","event","minute")
);

-- CreateIndex
CREATE INDEX "IdempotencyCounterMinute_minute_idx" ON "IdempotencyCounterMinute"("minute");

-- A key found by its value across tenants (equality) or by the start of its value (LIKE 'abc%').
-- text_pattern_ops compares character by character whatever the database's collation, so the
-- planner turns a LIKE prefix into an index range, and `ORDER BY "key" USING ~<~` reads it in
-- order (schema.prisma cannot name an operator class on a B-tree: it declares @@index([key])).
-- CreateIndex
CREATE INDEX "IdempotencyKey_key_idx" ON "IdempotencyKey"("key" text_pattern_ops);

-- The procedure filter matches a prefix ("checkout." finds checkout.placeOrder): same reason.
-- CreateIndex
CREATE INDEX "IdempotencyKey_procedure_idx" ON "IdempotencyKey"("procedure" text_pattern_ops);

-- The audit log names the key it acted on by value (and its tenant), not only by row id: the row
-- id dies with a bust, a key's value outlives it (the next request with it makes a new row).
-- AlterTable
ALTER TABLE "AuditEntry" ADD COLUMN "targetScope" TEXT,
ADD COLUMN "targetKey" VARCHAR(255);

-- Entries written before this migration recorded the key in their details.
UPDATE "AuditEntry" SET "targetScope" = "details"->>'tenant', "targetKey" = "details"->>'key'
WHERE "targetType" = 'IdempotencyKey' AND "details" ? 'key';

-- CreateIndex
CREATE INDEX "AuditEntry_targetKey_createdAt_idx" ON "AuditEntry"("targetKey", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_actor_createdAt_idx" ON "AuditEntry"("actor", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_action_createdAt_idx" ON "AuditEntry"("action", "createdAt" DESC);
