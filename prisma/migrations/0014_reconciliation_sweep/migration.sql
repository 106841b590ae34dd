-- Reconciliation judges orders by their update time (the recent pass) and walks the whole history
-- by creation time (the sweep): an index for each, so neither reads the whole table. A finding is
-- resolved with a note by someone; found again, it is opened again (both columns cleared).
CREATE INDEX "Order_updatedAt_idx" ON "Order"("updatedAt");
CREATE INDEX "Order_createdAt_idx" ON "Order"("createdAt");
ALTER TABLE "ReconciliationFinding" ADD COLUMN "resolution" TEXT;
ALTER TABLE "ReconciliationFinding" ADD COLUMN "resolvedBy" TEXT;
CREATE INDEX "ReconciliationFinding_resolvedAt_kind_idx" ON "ReconciliationFinding"("resolvedAt", "kind");
