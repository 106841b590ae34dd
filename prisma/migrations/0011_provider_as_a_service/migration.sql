-- The payment provider is a service of its own (services/provider, with its own database): the
-- shop keeps no provider books. Its charges are read through the provider's list API, and
-- reconciliation keeps how far it has judged them.
DROP TABLE "ProviderCharge";
DROP TABLE "ProviderIdempotencyRecord";
DROP TABLE "ProviderEvent";
DROP TYPE "ChargeStatus";

CREATE TABLE "ReconciliationCursor" (
    "name" TEXT NOT NULL,
    "judgedThrough" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ReconciliationCursor_pkey" PRIMARY KEY ("name")
);
