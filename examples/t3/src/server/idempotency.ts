import { createIdempotencyEngine } from "@once/idempotency";
import pg from "pg";

import { env } from "~/env";
import { db, pool } from "~/server/db";
import type { Prisma } from "../../generated/prisma";

const createEngine = () => {
  const engine = createIdempotencyEngine<Prisma.TransactionClient>({
    prisma: db,
    pool,
    // A connection of its own for LISTEN: finished answers are replayed from memory, and a key
    // an operator busts on one instance is forgotten by every instance.
    listen: () => new pg.Client({ connectionString: env.DATABASE_URL }),
  });
  // The reaper (keys past retention), the sweeper (abandoned keys) and the counters' flush.
  engine.startJobs((job, error) => console.warn(`[${job}] ${error.message}`));
  return engine;
};

// One engine per process, on globalThis: `next dev` re-evaluates modules on every change, and a
// second engine would hold a second LISTEN connection and run the jobs twice.
const globalForEngine = globalThis as unknown as {
  idempotencyEngine: ReturnType<typeof createEngine> | undefined;
};

export const engine = (globalForEngine.idempotencyEngine ??= createEngine());
