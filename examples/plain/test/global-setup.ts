// One PostgreSQL and one `next start` of this app's production build for all test files, the
// Next.js examples' shared setup (tools/examples/next-app.ts): APP_URL and DATABASE_URL.
import path from "node:path";
import { nextExampleSetup } from "../../../tools/examples/next-app";

// The tables Prisma would make for the Order and Report models (its migrate engine cannot be
// downloaded here).
const TABLES = `CREATE TABLE "Order" ("id" TEXT PRIMARY KEY, "totalCents" INTEGER NOT NULL, "refundedCents" INTEGER NOT NULL DEFAULT 0);
CREATE TABLE "Report" ("id" UUID PRIMARY KEY DEFAULT gen_random_uuid(), "title" TEXT NOT NULL, "rows" INTEGER NOT NULL, "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT now())`;

export default nextExampleSetup(path.resolve(import.meta.dirname, ".."), TABLES);
