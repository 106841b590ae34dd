-- The stuck-lease list at scale (issue 23, bench:admin at 10 million keys): "stuck, procedure
-- starting with P" read every stuck key's row from the heap before it could reject it (1.4 s at
-- 150 000 stuck keys, none matching). With the page order (createdAt, id) last in the stuck index,
-- the list picks its page's ids with an index-only scan (every filter and the order answered inside
-- the index) and reads the heap only for the rows it shows. 0008's index is a prefix of this one,
-- so the sweeper and the stuck counts keep their range scan.
DROP INDEX "IdempotencyKey_status_leaseExpiresAt_scope_procedure_idx";
CREATE INDEX "IdempotencyKey_stuck_page_idx" ON "IdempotencyKey"("status", "leaseExpiresAt", "scope", "procedure", "createdAt", "id");
