-- Server-side sessions (issue 22): a browser session is a row, so sign-out, a password change,
-- `npm run users -- revoke-sessions` and the operator can end it, and its expiry is the server's.
-- The cookie holds a random token; only its SHA-256 is stored (a leaked table opens nothing).
CREATE TABLE "Session" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tokenHash" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "userAgent" VARCHAR(200),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: the cookie's lookup.
CREATE UNIQUE INDEX "Session_tokenHash_key" ON "Session"("tokenHash");

-- CreateIndex: every session of an account (revoke, set-password, the operator's list).
CREATE INDEX "Session_userId_idx" ON "Session"("userId");

-- CreateIndex: forgetting expired sessions.
CREATE INDEX "Session_expiresAt_idx" ON "Session"("expiresAt");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
