import { createDb } from "./client";
import { migrate } from "./migrate";
import { seed } from "./seed";

/** Migrates and seeds the database at `databaseUrl`. Safe to run again: both steps are idempotent. */
export async function setupDatabase(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<void> {
  const applied = await migrate(databaseUrl);
  log(applied.length ? `[db] applied ${applied.join(", ")}` : "[db] schema up to date");
  const db = createDb(databaseUrl, { max: 2 });
  try {
    await seed(db);
  } finally {
    await db.$disconnect();
  }
}
