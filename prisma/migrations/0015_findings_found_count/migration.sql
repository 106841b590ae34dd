-- How many times each finding was found (recorded, then opened again after being resolved): the
-- counter once_reconciliation_findings_total{kind} is their sum, read from any instance.
ALTER TABLE "ReconciliationFinding" ADD COLUMN "timesFound" INTEGER NOT NULL DEFAULT 1;
