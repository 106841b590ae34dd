import { createDb } from "../../src/server/db/client";
import { migrate } from "./migrate";
import { seed } from "./seed";

/**
 * Migrates and seeds the database at `databaseUrl`. Safe to run again: both steps are idempotent.
 * The demo accounts and tokens are seeded only in demo mode (the configuration's DEMO_MODE).
 */
export async function setupDatabase(databaseUrl: string, log: (msg: string) => void, options: { demo: boolean }): Promise<void> {
  const { demo } = options;
  const applied = await migrate(databaseUrl);
  log(applied.length ? `[db] applied ${applied.join(", ")}` : "[db] schema up to date");
  const db = createDb(databaseUrl, { max: 2 });
  try {
    await seed(db, { demo });
    log(demo ? "[db] seeded, with the demo accounts and tokens (demo mode)" : "[db] seeded (no demo accounts: create one with `npm run users`)");
  } finally {
    await db.$disconnect();
  }
}
