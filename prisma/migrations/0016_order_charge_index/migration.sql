-- Reconciliation finds a listed charge's order by the charge's reference (the order's id) or by the
-- charge the order recorded (its chargeId): without an index the second read the whole table for
-- every page of the provider's list (0.5 s a page at a million orders).
CREATE INDEX "Order_chargeId_idx" ON "Order"("chargeId");
