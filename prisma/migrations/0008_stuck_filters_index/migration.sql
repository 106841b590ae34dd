-- The stuck-lease filters at scale (issue 23, bench:admin at 10 million keys): "stuck, tenant X,
-- procedure starting with P" read every stuck key's row from the heap to check the tenant and the
-- procedure (3.3 s median at 150 000 stuck keys). With scope and procedure in the index, the
-- stuck range is filtered inside the index (an index-only scan). The old two-column index is a
-- prefix of this one, so the sweeper and the stuck count keep their range scan.
DROP INDEX "IdempotencyKey_status_leaseExpiresAt_idx";
CREATE INDEX "IdempotencyKey_status_leaseExpiresAt_scope_procedure_idx" ON "IdempotencyKey"("status", "leaseExpiresAt", "scope", "procedure");
