// The example server: tRPC's standalone adapter, Prisma, the idempotency engine and its jobs.
import type { AddressInfo } from "node:net";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { createIdempotencyEngine } from "@once/idempotency";
import pg from "pg";
import { connect, type Tx } from "./db.js";
import { appRouter } from "./router.js";

export interface AppOptions {
  databaseUrl: string;
  allowSlowHeader?: boolean;
  log?: (message: string) => void;
}

export function createApp(options: AppOptions) {
  const { prisma, pool } = connect(options.databaseUrl);
  const engine = createIdempotencyEngine<Tx>({
    prisma,
    pool,
    // The pool connects to PostgreSQL itself (no PgBouncer): the engine's statements are prepared.
    preparedStatements: true,
    // A direct connection for LISTEN: busts reach every instance, and retries are answered from
    // memory.
    listen: () => new pg.Client({ connectionString: options.databaseUrl }),
  });
  const log = options.log ?? ((message: string) => console.warn(message));
  const stopJobs = engine.startJobs((job, error) => log(`[${job}] ${error.message}`));
  const server = createHTTPServer({
    router: appRouter,
    createContext: ({ req, res, info }) => ({
      prisma,
      engine,
      http: {
        header: (name: string) => [req.headers[name.toLowerCase()]].flat()[0],
        setHeader: (name: string, value: string) => res.setHeader(name, value),
        batchSize: info.calls.length,
      },
      allowSlowHeader: options.allowSlowHeader ?? false,
    }),
  });
  return {
    engine,
    prisma,
    async listen(port = 0): Promise<string> {
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async close(): Promise<void> {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopJobs();
      await engine.close();
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
