// One PostgreSQL and the three apps for all test files: the examples' shared setup
// (tools/examples/server-apps.ts) sets EXPRESS_URL, FASTIFY_URL, NESTJS_URL and DATABASE_URL; the
// three again on a PostgreSQL the 503 checks stop (EXPRESS_STOPPABLE_URL…, STOPPABLE_PG_DATA).
import path from "node:path";
import { serverAppsSetup } from "../../../tools/examples/server-apps";
import { ORDER_TABLE } from "./order-table";

export default serverAppsSetup(
  path.resolve(import.meta.dirname, ".."),
  ORDER_TABLE,
  {
    EXPRESS: "express",
    FASTIFY: "fastify",
    NESTJS: "nestjs",
  },
  { stoppable: true },
);
