-- @once/idempotency 0.2.0: run once on a key table created by an earlier sql/migration.sql (as a
-- migration of your own). A request waiting on a key (Prefer: wait) marks it "awaited", and only
-- then does the key's settle send its NOTIFY. Without the column the statements that settle or
-- renew a key fail (the engine answers 503): apply it before the new version serves. Add the field
-- of prisma/idempotency.prisma to your model too.
ALTER TABLE "IdempotencyKey" ADD COLUMN "awaited" BOOLEAN NOT NULL DEFAULT false;
