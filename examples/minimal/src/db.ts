// Prisma on a pg pool we build ourselves, so the engine can send its statements outside the
// business transaction straight to the same pool.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient, type Prisma } from "./generated/prisma/client.js";

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;

export function connect(databaseUrl: string): { prisma: Db; pool: pg.Pool } {
  // Fail fast when PostgreSQL is gone: the engine then answers 503 instead of hanging.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    connectionTimeoutMillis: 2_000,
  });
  pool.on("error", () => {}); // an idle connection that dies is dropped; the next query reconnects
  return { prisma: new PrismaClient({ adapter: new PrismaPg(pool) }), pool };
}
