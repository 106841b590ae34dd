-- Each finding names its subject, the one record it is about ('charge:<id>', 'order:<id>' or
-- 'intent:<tenant>:<checkout key>'): reconciliation judges a subject whole, and closes the open
-- findings about it that the judgement no longer finds. Findings recorded before are given theirs.
ALTER TABLE "ReconciliationFinding" ADD COLUMN "subject" TEXT;
UPDATE "ReconciliationFinding" SET "subject" = CASE "kind"
  WHEN 'PAID_ORDER_WITHOUT_CHARGE' THEN 'order:' || "orderId"
  WHEN 'SHARED_INTENT' THEN 'intent:' || ("details"->>'tenantId') || ':' || ("details"->>'checkoutKey')
  ELSE 'charge:' || "chargeIds"[cardinality("chargeIds")]
END;
CREATE INDEX "ReconciliationFinding_subject_idx" ON "ReconciliationFinding"("subject");

-- The orders whose charge a reconciliation run has seen in the provider's list, and when: a run
-- looks up by its key only the settled orders it has not seen charged, without holding every
-- charge it listed in memory. One row per order, overwritten by each run that sees it.
CREATE TABLE "ChargeSighting" (
    "orderId" UUID NOT NULL,
    "seenAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ChargeSighting_pkey" PRIMARY KEY ("orderId")
);
