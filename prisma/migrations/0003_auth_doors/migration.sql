-- Authentication doors (issue 10): passwords, demo rows marked as such, a shared sign-in throttle.

-- AlterTable: an account signs in with a password (scrypt, see src/server/auth/password.ts);
-- demo accounts have none and are marked, so they only open in demo mode.
ALTER TABLE "User" ADD COLUMN "passwordHash" TEXT,
ADD COLUMN "demo" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable: demo API tokens are marked too, and refused unless the server runs in demo mode.
ALTER TABLE "ApiToken" ADD COLUMN "demo" BOOLEAN NOT NULL DEFAULT false;

-- Before this migration every account and token came from the demo seed (there was no other way
-- to make one): mark them, so a database seeded in demo mode earlier does not let them in later.
UPDATE "User" SET "demo" = true
WHERE "email" IN ('acme@example.com', 'globex@example.com', 'admin@example.com');
UPDATE "ApiToken" SET "demo" = true
WHERE "userId" IN (SELECT "id" FROM "User" WHERE "demo")
   OR "tokenHash" IN (
        encode(sha256('acme_demo_token'::bytea), 'hex'),
        encode(sha256('globex_demo_token'::bytea), 'hex'),
        encode(sha256('admin_demo_token'::bytea), 'hex'));

-- CreateTable: failed sign-ins per account and per client address, in PostgreSQL so that every
-- app instance counts against the same budget (src/server/auth/throttle.ts).
CREATE TABLE "SignInThrottle" (
    "key" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "windowStartedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SignInThrottle_pkey" PRIMARY KEY ("key")
);

-- CreateIndex: forgetting windows long past.
CREATE INDEX "SignInThrottle_windowStartedAt_idx" ON "SignInThrottle"("windowStartedAt");
