// benchBare.catalog: catalog.list's one SELECT as the least tRPC query there is, the floor that
// bench:http's route costs judge the app's catalog read by beside the read by hand. Served in the
// running app's process by its front door (through control-route.ts's lab routes, demo mode only),
// so it pays what any tRPC route on node:http pays and nothing else: the door's Request (with the
// abort signal a route needs to see its client leave) and its write of the answer, tRPC's fetch
// handler, and the statement on the app's pg pool. No context, no middleware, none of the app's
// doors (cross-site, body limit, places in flight), no error links.
import { initTRPC } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { CATALOG_LIST_SQL } from "../../../src/server/catalog/list-statement";
import { readOnPool, type Db } from "../../../src/server/db/client";

export const BARE_CATALOG_PROCEDURE = "benchBare.catalog";
export const BARE_CATALOG_PATH = `/api/trpc/${BARE_CATALOG_PROCEDURE}`;

/** The bare router: one query, the catalog's statement on the pool (prepared, as the app's). */
function bareRouter(db: Db) {
  const t = initTRPC.create();
  return t.router({
    benchBare: t.router({
      catalog: t.procedure.query(async () => {
        const rows = await readOnPool(db, "bench_bare_catalog", CATALOG_LIST_SQL);
        if (!rows) throw new Error("benchBare.catalog needs the app's pg pool");
        return rows;
      }),
    }),
  });
}

/** `/api/trpc/benchBare.catalog` on the running app's database. */
export function bareTrpcRoute(app: { db: Db }): (req: Request) => Promise<Response> {
  const router = bareRouter(app.db);
  return (req) => fetchRequestHandler({ endpoint: "/api/trpc", req, router });
}
