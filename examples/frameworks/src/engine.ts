// The engine, once per process: Prisma on a pg pool we build, so the engine's own statements go
// straight to the same pool, and a connection of its own for LISTEN (`Prefer: wait`, replays from
// memory). The apps' handlers write through the same `prisma`.
import { createIdempotencyEngine } from "@once/idempotency";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient, type Prisma } from "./generated/prisma/client";

const connectionString = process.env.DATABASE_URL;
// Fail fast when PostgreSQL is gone: the engine then answers 503 instead of hanging.
const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 2_000 });
pool.on("error", () => {}); // an idle connection that dies is dropped; the next query reconnects

export const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });

export const engine = createIdempotencyEngine<Prisma.TransactionClient>({
  prisma,
  pool,
  listen: () => new pg.Client({ connectionString }),
});
