// One PostgreSQL and the three apps for all test files: the examples' shared setup
// (tools/examples/server-apps.ts) gives the tests each app's URL (`inject("serverApps")`) and sets
// DATABASE_URL; the three again on a PostgreSQL the 503 checks stop (`serverApps.stoppable`).
import path from "node:path";
import { serverAppsSetup, type ServerApps } from "../../../tools/examples/server-apps";
import { ORDER_TABLE } from "./order-table";

declare module "vitest" {
  export interface ProvidedContext {
    serverApps: ServerApps;
  }
}

export default serverAppsSetup(
  path.resolve(import.meta.dirname, ".."),
  ORDER_TABLE,
  ["express", "fastify", "nestjs"],
  { stoppable: true },
);
