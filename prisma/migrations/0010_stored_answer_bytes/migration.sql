-- Any HTTP answer, stored as it was sent (issue 27): a body that is not UTF-8 text keeps its bytes
-- in "responseBytes" (bytea: stored as is, not as base64 text a third larger); the answer's
-- allow-listed headers in "responseHeaders" (a JSON array of [name, value] pairs, in order); and
-- an answer larger than the largest stored one is kept without its body, its size in
-- "responseOmittedBytes", so a replay can say so.
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseBytes" BYTEA;
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseHeaders" JSONB;
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseOmittedBytes" INTEGER;
