-- @once/idempotency 0.2.0: run once on a key table created by an earlier sql/migration.sql (as a
-- migration of your own). A body that is not UTF-8 text keeps its bytes in "responseBytes"; the
-- answer's allow-listed headers are in "responseHeaders"; an answer above the largest stored size
-- is kept without its body, its size in "responseOmittedBytes". Add the three fields of
-- prisma/idempotency.prisma to your model too.
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseBytes" BYTEA;
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseHeaders" JSONB;
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseOmittedBytes" INTEGER;
