-- A request that waits on a key (Prefer: wait) marks it awaited; only then does the key's settle
-- send its NOTIFY (issue 29: a NOTIFY on every settle cost 3–25 % of the keys a second). A
-- constant default: PostgreSQL 11+ adds the column without rewriting the table.
ALTER TABLE "IdempotencyKey" ADD COLUMN "awaited" BOOLEAN NOT NULL DEFAULT false;
