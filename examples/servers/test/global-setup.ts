// One PostgreSQL and both servers (Hono, node:http) for all test files: the examples' shared setup
// (tools/examples/server-apps.ts) sets HONO_URL, NODE_HTTP_URL and DATABASE_URL.
import path from "node:path";
import { serverAppsSetup } from "../../../tools/examples/server-apps";

// The table Prisma would make for the Report model (its migrate engine cannot be downloaded here).
const REPORT_TABLE = `CREATE TABLE "Report" ("id" UUID PRIMARY KEY DEFAULT gen_random_uuid(), "title" TEXT NOT NULL, "rows" INTEGER NOT NULL, "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT now())`;

export default serverAppsSetup(path.resolve(import.meta.dirname, ".."), REPORT_TABLE, {
  HONO: "hono",
  NODE_HTTP: "node-http",
});
