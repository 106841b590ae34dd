import { createDb } from "../../src/server/db/client";
import { migrate } from "./migrate";
import { seed } from "./seed";

export interface SetupOptions {
  /** Seed the demo accounts and tokens (the configuration's DEMO_MODE). */
  demo: boolean;
  /**
   * PostgreSQL itself when `databaseUrl` is a transaction-mode pooler (DIRECT_DATABASE_URL). The
   * migrations run here: they hold a session-level advisory lock (Prisma Migrate's), and a pooler
   * in transaction mode hands each statement whichever server connection is free, so the lock
   * would neither keep other runners out nor be released by the connection that took it.
   */
  directUrl?: string;
}

/**
 * Migrates and seeds the database at `databaseUrl`. Safe to run again: both steps are idempotent.
 * The demo accounts and tokens are seeded only in demo mode.
 */
export async function setupDatabase(
  databaseUrl: string,
  log: (msg: string) => void,
  options: SetupOptions,
): Promise<void> {
  const { demo } = options;
  const applied = await migrate(options.directUrl ?? databaseUrl);
  log(applied.length ? `[db] applied ${applied.join(", ")}` : "[db] schema up to date");
  // Unprepared: a seed runs a few statements once, and databaseUrl may be a pooler that cannot
  // keep prepared statements.
  const db = createDb(databaseUrl, { max: 2, preparedStatements: false });
  try {
    await seed(db, { demo });
    log(
      demo
        ? "[db] seeded, with the demo accounts and tokens (demo mode)"
        : "[db] seeded (no demo accounts: create one with `npm run users`)",
    );
  } finally {
    await db.$disconnect();
  }
}
