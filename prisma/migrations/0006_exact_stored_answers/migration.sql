-- A replay is the first answer byte for byte: the body is kept as the exact text that was sent
-- (jsonb would reorder its members), with its content type. responseHeaders was never written.
ALTER TABLE "IdempotencyKey" ALTER COLUMN "responseBody" TYPE TEXT USING "responseBody"::text;
ALTER TABLE "IdempotencyKey" DROP COLUMN "responseHeaders";
ALTER TABLE "IdempotencyKey" ADD COLUMN "responseContentType" TEXT;
