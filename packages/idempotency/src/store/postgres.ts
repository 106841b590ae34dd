// The key store on PostgreSQL, through Prisma (the business transaction) and, when given, the pg
// pool under Prisma's adapter (every statement outside that transaction).
//
// No statement on the hot path can fail on the unique constraint: with @prisma/adapter-pg a failed
// statement makes the pool discard its connection (a reconnect costs ~19× the request). Reserve is
// `INSERT … ON CONFLICT DO NOTHING RETURNING`; takeover and renewal are conditional UPDATEs.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { CommitWatch } from "./commit-watch.js";
import { JoinedStatements } from "./joined-statements.js";
import * as SQL from "./sql.js";
import type {
  FinalStatus,
  IdempotencyStore,
  KeyRecord,
  PrismaLike,
  ReserveRequest,
  ReserveResult,
  SqlTransaction,
  StoredResponse,
} from "./types.js";

/** A statement's text, or the text with a name it may be prepared under. */
export type Sql = string | SQL.NamedStatement;

const textOf = (sql: Sql) => (typeof sql === "string" ? sql : sql.text);

/** Runs one statement outside any transaction. */
export interface SqlRunner {
  query<T>(sql: Sql, values: unknown[]): Promise<T[]>;
  execute(sql: Sql, values: unknown[]): Promise<number>;
}

export function runnerOf(client: SqlTransaction): SqlRunner {
  return {
    query: (sql, values) => client.$queryRawUnsafe(textOf(sql), ...values),
    execute: (sql, values) => client.$executeRawUnsafe(textOf(sql), ...values),
  };
}

export interface PoolRunnerOptions {
  /**
   * Send named statements under their names, so PostgreSQL parses and plans each once per
   * connection (default). Where the pool's connections turn out not to be PostgreSQL's own
   * sessions (a transaction-mode pooler that keeps no prepared statements: PgBouncer before 1.21,
   * or with max_prepared_statements = 0), the first statement that finds its name missing or
   * already taken on the server connection says so; the runner then stops preparing, sends that
   * statement again unnamed (it never ran: both errors come before execution) and tells `warn`.
   */
  prepare?: boolean;
  warn?: (message: string) => void;
}

/** PostgreSQL's answers when a server connection does not hold what this client prepared. */
const NOT_PREPARED_HERE = new Set([
  "26000", // invalid_sql_statement_name: prepared statement "…" does not exist
  "42P05", // duplicate_prepared_statement: prepared statement "…" already exists
]);

const notPreparedHere = (error: unknown) =>
  NOT_PREPARED_HERE.has((error as { code?: unknown } | null)?.code as string);

/**
 * The same statements sent straight to the pg pool under Prisma's adapter (same connections).
 * Measured (npm run bench), Prisma adds ~0.3 ms of CPU per raw statement; a replay is one
 * statement, so that would be most of its cost. Results come back in the same shapes.
 */
export function poolRunner(pool: pg.Pool, options: PoolRunnerOptions = {}): SqlRunner {
  let prepare = options.prepare ?? true;
  const config = (sql: Sql, values: unknown[]): pg.QueryConfig =>
    typeof sql !== "string" && prepare
      ? { name: sql.name, text: sql.text, values }
      : { text: textOf(sql), values };
  const send = async (sql: Sql, values: unknown[]) => {
    const sent = config(sql, values);
    try {
      return await pool.query(sent);
    } catch (error) {
      // Sent prepared (by this call, whatever others have learnt since) and refused for it.
      if (sent.name === undefined || !notPreparedHere(error)) throw error;
      if (prepare) {
        prepare = false;
        (options.warn ?? console.warn)(
          `@once/idempotency: the database connection does not keep prepared statements (${(error as Error).message}): ` +
            "a transaction-mode pooler? Statements go unprepared from now on (preparedStatements: false says so up front)",
        );
      }
      return pool.query(config(sql, values));
    }
  };
  return {
    query: async <T>(sql: Sql, values: unknown[]) => (await send(sql, values)).rows as T[],
    execute: async (sql, values) => (await send(sql, values)).rowCount ?? 0,
  };
}

type Flagged = KeyRecord & { inserted: boolean };

function withoutFlag({ inserted: _inserted, ...record }: Flagged): KeyRecord {
  return record;
}

export class PostgresIdempotencyStore<TTx extends SqlTransaction> implements IdempotencyStore<TTx> {
  readonly run: SqlRunner;
  /** Only with the pool: its connections are where PostgreSQL's commit warnings arrive. */
  private readonly watch?: CommitWatch;
  /** Lease token → the backend pid that ran the completion, until the commit's outcome is read. */
  private readonly completions = new Map<string, number>();
  /** Reads of one key, and marks of one lease, share statements (JoinedStatements). */
  private readonly reads = new JoinedStatements<KeyRecord | null>();
  private readonly marks = new JoinedStatements<KeyRecord | null>();

  private readonly settle: (statement: SQL.SettlingStatement) => SQL.NamedStatement;

  constructor(
    private readonly prisma: PrismaLike<TTx>,
    pool?: pg.Pool,
    options: PoolRunnerOptions & { announceSettled?: boolean } = {},
  ) {
    this.run = pool ? poolRunner(pool, options) : runnerOf(prisma);
    this.watch = pool ? new CommitWatch(pool) : undefined;
    // Announcing costs a NOTIFY per settle; it is needed only where requests may wait on keys.
    this.settle = (statement) => (options.announceSettled ? statement.notifying : statement.plain);
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const values = [
      r.scope,
      r.key,
      r.procedure,
      r.fingerprint,
      randomUUID(),
      r.leaseMs,
      r.ttlSeconds,
    ];
    const [row] = await this.run.query<Flagged>(SQL.RESERVE, values);
    if (row?.inserted) return { reserved: true, record: withoutFlag(row) };
    return { reserved: false, existing: row ? withoutFlag(row) : await this.read(r.scope, r.key) };
  }

  async indexColumns(index: string): Promise<string[]> {
    const rows = await this.run.query<{ column: string }>(SQL.INDEX_COLUMNS, [index]);
    return rows.map((r) => r.column);
  }

  /** Joined with the other reads of the key (JoinedStatements). */
  read(scope: string, key: string): Promise<KeyRecord | null> {
    return this.reads.run(`${scope}\u0000${key}`, () =>
      this.run.query<KeyRecord>(SQL.READ, [scope, key]).then(([row]) => row ?? null),
    );
  }

  /** Joined with the other marks of the same lease (JoinedStatements). */
  markAwaited(record: KeyRecord): Promise<KeyRecord | null> {
    const { scope, key, leaseToken } = record;
    return this.marks.run(`${scope}\u0000${key}\u0000${leaseToken}`, () =>
      this.run
        .query<KeyRecord>(SQL.MARK_AWAITED, [scope, key, leaseToken])
        .then(([row]) => row ?? null),
    );
  }

  async takeOver(record: KeyRecord, r: ReserveRequest): Promise<KeyRecord | null> {
    const [row] = await this.run.query<KeyRecord>(SQL.TAKE_OVER, [
      record.id,
      randomUUID(),
      r.leaseMs,
      record.scope,
      record.leaseToken,
      record.key,
    ]);
    return row ?? null;
  }

  async renewExpired(record: KeyRecord, r: ReserveRequest): Promise<KeyRecord | null> {
    const values = [
      record.id,
      randomUUID(),
      r.leaseMs,
      r.procedure,
      r.fingerprint,
      r.ttlSeconds,
      record.scope,
      record.key,
    ];
    const [row] = await this.run.query<KeyRecord>(SQL.RENEW_EXPIRED, values);
    return row ?? null;
  }

  transaction<T>(fn: (tx: TTx) => Promise<T>, options: { timeoutMs: number }): Promise<T> {
    return this.prisma.$transaction(fn, { timeout: options.timeoutMs, maxWait: options.timeoutMs });
  }

  async finish(
    record: KeyRecord,
    status: FinalStatus,
    response: StoredResponse,
    tx?: TTx,
  ): Promise<boolean> {
    const values = [
      record.id,
      record.leaseToken,
      status,
      response.status,
      response.body,
      response.contentType,
      response.bytes ?? null,
      response.headers ? JSON.stringify(response.headers) : null,
      response.omittedBytes ?? null,
      record.scope,
      record.key,
    ];
    const [row] = await (tx ? runnerOf(tx) : this.run).query<{ pid: number }>(
      this.settle(SQL.FINISH),
      values,
    );
    if (row && tx && this.watch && record.leaseToken) {
      this.watch.arm(row.pid);
      this.completions.set(record.leaseToken, row.pid);
    }
    return row !== undefined;
  }

  commitUnconfirmed(record: KeyRecord): boolean {
    const pid = record.leaseToken ? this.completions.get(record.leaseToken) : undefined;
    if (pid === undefined || !this.watch) return false;
    this.completions.delete(record.leaseToken!);
    return this.watch.take(pid);
  }

  async release(record: KeyRecord): Promise<boolean> {
    return (
      (
        await this.run.query(this.settle(SQL.RELEASE), [
          record.id,
          record.leaseToken,
          record.scope,
          record.key,
        ])
      ).length === 1
    );
  }

  async countLive(scope: string, limit: number): Promise<number> {
    const [row] = await this.run.query<{ n: number }>(SQL.COUNT_LIVE, [scope, limit]);
    return row?.n ?? 0;
  }
}
