// One PostgreSQL and one `next start` of this app's production build for all test files, the
// Next.js examples' shared setup (tools/examples/next-app.ts): APP_URL and DATABASE_URL.
import path from "node:path";
import { nextExampleSetup } from "../../../tools/examples/next-app";

// The table Prisma would make for the Order model (its migrate engine cannot be downloaded here).
const ORDER_TABLE = `CREATE TABLE "Order" ("id" TEXT PRIMARY KEY, "totalCents" INTEGER NOT NULL, "refundedCents" INTEGER NOT NULL DEFAULT 0)`;

export default nextExampleSetup(path.resolve(import.meta.dirname, ".."), ORDER_TABLE);
