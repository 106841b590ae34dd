// One PostgreSQL and both servers (Hono, node:http) for all test files: the examples' shared setup
// (tools/examples/server-apps.ts) gives the tests each server's URL (`inject("serverApps")`) and
// sets DATABASE_URL.
import path from "node:path";
import { serverAppsSetup, type ServerApps } from "../../../tools/examples/server-apps";

declare module "vitest" {
  export interface ProvidedContext {
    serverApps: ServerApps;
  }
}

// The table Prisma would make for the Report model (its migrate engine cannot be downloaded here).
const REPORT_TABLE = `CREATE TABLE "Report" ("id" UUID PRIMARY KEY DEFAULT gen_random_uuid(), "title" TEXT NOT NULL, "rows" INTEGER NOT NULL, "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT now())`;

export default serverAppsSetup(path.resolve(import.meta.dirname, ".."), REPORT_TABLE, [
  "hono",
  "node-http",
]);
