// The key store: a narrow interface the protocol is written against, and its one implementation
// on Prisma + PostgreSQL. Every time that matters (lease, retention) is the database's `now()`,
// so app instances with skewed clocks still agree.
//
// No statement on the hot path can fail on the unique constraint: with @prisma/adapter-pg a failed
// statement makes the pool discard its connection (a reconnect costs ~19× the request). Reserve is
// `INSERT … ON CONFLICT DO NOTHING RETURNING`; takeover and renewal are conditional UPDATEs.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { Prisma } from "../../generated/prisma/client";
import type { PrismaClient } from "../../generated/prisma/client";
import type { KeyStatus } from "./constants";

export type Tx = Prisma.TransactionClient;

export interface KeyRecord {
  id: string;
  scope: string;
  key: string;
  procedure: string;
  fingerprint: string;
  status: KeyStatus;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  attempts: number;
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
  /** The database's clock when this row was read: leases and retention are judged against it. */
  dbNow: Date;
}

export interface ReserveRequest {
  scope: string;
  key: string;
  procedure: string;
  fingerprint: string;
  leaseMs: number;
  ttlSeconds: number;
}

export interface StoredOutcome {
  status: number;
  body: unknown;
}

export type ReserveResult = { reserved: true; record: KeyRecord } | { reserved: false; existing: KeyRecord | null };

export interface IdempotencyStore {
  /** Inserts the key as PROCESSING with a fresh lease, or reports the row that already holds it. */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  read(scope: string, key: string): Promise<KeyRecord | null>;
  /** PROCESSING with an expired lease → a new lease, attempts + 1. Null if someone else won. */
  takeOver(record: KeyRecord, request: ReserveRequest): Promise<KeyRecord | null>;
  /** Past its retention → reserved anew for this request, as if absent. Null if someone else won. */
  renewExpired(record: KeyRecord, request: ReserveRequest): Promise<KeyRecord | null>;
  /** Runs `fn` in one transaction: the business write and `complete` commit together. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options: { timeoutMs: number }): Promise<T>;
  /** Marks the key COMPLETED inside the business transaction, fenced by the lease token. */
  complete(tx: Tx, record: KeyRecord, outcome: StoredOutcome): Promise<boolean>;
  /** Marks the key FAILED with a deterministic error (after the business rollback), fenced. */
  fail(record: KeyRecord, outcome: StoredOutcome): Promise<boolean>;
  /** Deletes the key (fenced) so a retry runs anew. */
  release(record: KeyRecord): Promise<boolean>;
  /** Live (unexpired) keys in a scope, counted up to `limit`. */
  countLive(scope: string, limit: number): Promise<number>;
}

const COLUMNS = Prisma.sql`"id", "scope", "key", "procedure", "fingerprint", "status"::text AS "status",
  "leaseToken"::text AS "leaseToken", "leaseExpiresAt", "attempts", "responseStatus", "responseBody",
  "createdAt", "completedAt", "expiresAt", now() AS "dbNow"`;
const RETURNING = Prisma.sql`RETURNING ${COLUMNS}`;

function withoutFlag({ inserted: _inserted, ...record }: KeyRecord & { inserted: boolean }): KeyRecord {
  return record;
}

const leaseEnd = (ms: number) => Prisma.sql`now() + make_interval(secs => ${ms / 1000}::float8)`;
const retentionEnd = (seconds: number) => Prisma.sql`now() + make_interval(secs => ${seconds}::float8)`;

/** Runs a statement outside any transaction. */
interface SqlRunner {
  query<T>(sql: Prisma.Sql): Promise<T[]>;
  execute(sql: Prisma.Sql): Promise<number>;
}

function prismaRunner(db: PrismaClient): SqlRunner {
  return { query: (sql) => db.$queryRaw(sql), execute: (sql) => db.$executeRaw(sql) };
}

/**
 * The same statements sent straight to the pg pool under Prisma's adapter (same connections).
 * Measured here (npm run bench), Prisma adds ~0.4 ms of CPU per raw statement; on a replay, which
 * is one statement, that is most of the cost. Results come back in the same shapes (Date for
 * timestamptz, parsed jsonb, numbers for int).
 */
function pgRunner(pool: pg.Pool): SqlRunner {
  return {
    query: async <T>(sql: Prisma.Sql) => (await pool.query(sql.text, sql.values)).rows as T[],
    execute: async (sql) => (await pool.query(sql.text, sql.values)).rowCount ?? 0,
  };
}

export class PrismaIdempotencyStore implements IdempotencyStore {
  private readonly run: SqlRunner;
  constructor(
    private readonly db: PrismaClient,
    pool?: pg.Pool,
  ) {
    this.run = pool ? pgRunner(pool) : prismaRunner(db);
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    // One round trip for both outcomes: insert, or return the row that holds the key. All parts of
    // a WITH statement share one snapshot, so a row committed by a racing insert *during* this
    // statement is invisible to its SELECT: then neither part returns a row and we read again.
    const rows = await this.run.query<KeyRecord & { inserted: boolean }>(Prisma.sql`
      WITH "inserted" AS (
        INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
        VALUES (${r.scope}, ${r.key}, ${r.procedure}, ${r.fingerprint}, 'PROCESSING', ${randomUUID()}::uuid,
                ${leaseEnd(r.leaseMs)}, ${retentionEnd(r.ttlSeconds)})
        ON CONFLICT ("scope", "key") DO NOTHING
        RETURNING ${COLUMNS}, true AS "inserted"
      )
      SELECT * FROM "inserted"
      UNION ALL
      SELECT ${COLUMNS}, false AS "inserted" FROM "IdempotencyKey"
      WHERE "scope" = ${r.scope} AND "key" = ${r.key} AND NOT EXISTS (SELECT 1 FROM "inserted")`);
    const row = rows[0];
    if (row?.inserted) return { reserved: true, record: withoutFlag(row) };
    return { reserved: false, existing: row ? withoutFlag(row) : await this.read(r.scope, r.key) };
  }

  async read(scope: string, key: string): Promise<KeyRecord | null> {
    const rows = await this.run.query<KeyRecord>(Prisma.sql`
      SELECT ${COLUMNS} FROM "IdempotencyKey" WHERE "scope" = ${scope} AND "key" = ${key}`);
    return rows[0] ?? null;
  }

  async takeOver(record: KeyRecord, r: ReserveRequest): Promise<KeyRecord | null> {
    const rows = await this.run.query<KeyRecord>(Prisma.sql`
      UPDATE "IdempotencyKey"
      SET "leaseToken" = ${randomUUID()}::uuid, "leaseExpiresAt" = ${leaseEnd(r.leaseMs)},
          "attempts" = "attempts" + 1, "updatedAt" = now()
      WHERE "id" = ${record.id}::uuid AND "status" = 'PROCESSING'
        AND "leaseExpiresAt" <= now() AND "expiresAt" > now()
      ${RETURNING}`);
    return rows[0] ?? null;
  }

  async renewExpired(record: KeyRecord, r: ReserveRequest): Promise<KeyRecord | null> {
    const rows = await this.run.query<KeyRecord>(Prisma.sql`
      UPDATE "IdempotencyKey"
      SET "procedure" = ${r.procedure}, "fingerprint" = ${r.fingerprint}, "status" = 'PROCESSING',
          "leaseToken" = ${randomUUID()}::uuid, "leaseExpiresAt" = ${leaseEnd(r.leaseMs)}, "attempts" = 1,
          "responseStatus" = NULL, "responseBody" = NULL, "responseHeaders" = NULL, "completedAt" = NULL,
          "createdAt" = now(), "updatedAt" = now(), "expiresAt" = ${retentionEnd(r.ttlSeconds)}
      WHERE "id" = ${record.id}::uuid AND "expiresAt" <= now()
        AND ("status" <> 'PROCESSING' OR "leaseExpiresAt" <= now())
      ${RETURNING}`);
    return rows[0] ?? null;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, options: { timeoutMs: number }): Promise<T> {
    return this.db.$transaction(fn, { timeout: options.timeoutMs, maxWait: options.timeoutMs });
  }

  async complete(tx: Tx, record: KeyRecord, outcome: StoredOutcome): Promise<boolean> {
    const updated = await tx.$executeRaw`
      UPDATE "IdempotencyKey"
      SET "status" = 'COMPLETED', "responseStatus" = ${outcome.status}, "responseBody" = ${JSON.stringify(outcome.body)}::jsonb,
          "completedAt" = now(), "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
      WHERE "id" = ${record.id}::uuid AND "leaseToken" = ${record.leaseToken}::uuid AND "status" = 'PROCESSING'`;
    return updated === 1;
  }

  async fail(record: KeyRecord, outcome: StoredOutcome): Promise<boolean> {
    const updated = await this.run.execute(Prisma.sql`
      UPDATE "IdempotencyKey"
      SET "status" = 'FAILED', "responseStatus" = ${outcome.status}, "responseBody" = ${JSON.stringify(outcome.body)}::jsonb,
          "completedAt" = now(), "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
      WHERE "id" = ${record.id}::uuid AND "leaseToken" = ${record.leaseToken}::uuid AND "status" = 'PROCESSING'`);
    return updated === 1;
  }

  async release(record: KeyRecord): Promise<boolean> {
    const deleted = await this.run.execute(Prisma.sql`
      DELETE FROM "IdempotencyKey"
      WHERE "id" = ${record.id}::uuid AND "leaseToken" = ${record.leaseToken}::uuid AND "status" = 'PROCESSING'`);
    return deleted === 1;
  }

  async countLive(scope: string, limit: number): Promise<number> {
    const rows = await this.run.query<{ n: number }>(Prisma.sql`
      SELECT count(*)::int AS "n" FROM (
        SELECT 1 FROM "IdempotencyKey" WHERE "scope" = ${scope} AND "expiresAt" > now() LIMIT ${limit}
      ) AS live`);
    return rows[0]?.n ?? 0;
  }
}
