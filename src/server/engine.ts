// The app's idempotency engine on a database client: the composition root (src/server/app.ts)
// makes the process's one; tests and benchmarks make one per database.
import { createIdempotencyEngine, type IdempotencyEngine } from "@once/idempotency";
import { type EngineConfigInput } from "@once/idempotency/config";
import { ListenedClient, poolOf, preparesStatements, type Db, type Tx } from "./db/client";

export type Engine = IdempotencyEngine<Tx>;

/**
 * A new engine on `db`. `listenUrl` is a direct connection to PostgreSQL (not through a
 * transaction-mode pooler) for LISTEN: with it, finished answers are replayed from memory and busts
 * reach every instance; without it, every retry reads the database.
 */
export function createEngineFor(
  db: Db,
  config: EngineConfigInput = {},
  options: { listenUrl?: string } = {},
): Engine {
  const { listenUrl } = options;
  return createIdempotencyEngine<Tx>({
    prisma: db,
    pool: poolOf(db),
    preparedStatements: preparesStatements(db),
    config,
    listen: listenUrl ? () => new ListenedClient({ connectionString: listenUrl }) : undefined,
  });
}
