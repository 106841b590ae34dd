// The key store's narrow interface: the protocol is written against it, and postgres.ts is its one
// implementation. Every time that matters (lease, retention) is the database's `now()`, so app
// instances with skewed clocks still agree.
import type { KeyStatus } from "../constants.js";

/** The statements the engine sends through a Prisma interactive transaction. */
export interface SqlTransaction {
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: any[]): Promise<number>;
}

/** What the engine needs of a Prisma client: interactive transactions and raw SQL. */
export interface PrismaLike<TTx extends SqlTransaction = SqlTransaction> extends SqlTransaction {
  $transaction<R>(
    fn: (tx: TTx) => Promise<R>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<R>;
}

/** The answer as stored and replayed: status, the body's exact text, its content type. */
export interface StoredResponse {
  status: number;
  /** The body's exact text ("" when `bytes` or `omittedBytes` is set). */
  body: string;
  /** "" for an answer without a Content-Type. */
  contentType: string;
  /**
   * The body's exact bytes, when they are not UTF-8 text that PostgreSQL's text type can hold (the
   * HTTP layer).
   */
  bytes?: Uint8Array;
  /**
   * Headers replayed with the answer besides Content-Type, in order (the HTTP layer's allow-list).
   */
  headers?: [name: string, value: string][];
  /**
   * Set when the body was larger than the largest stored answer (`maxStoredBodyBytes`): the
   * outcome is kept without its body, and this is the body's size in bytes.
   */
  omittedBytes?: number;
}

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
  responseBody: string | null;
  responseContentType: string | null;
  responseBytes: Uint8Array | null;
  responseHeaders: [string, string][] | null;
  responseOmittedBytes: number | null;
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

export type ReserveResult =
  { reserved: true; record: KeyRecord } | { reserved: false; existing: KeyRecord | null };

/** How a key ends: COMPLETED commits with the business write, FAILED after its rollback. */
export type FinalStatus = Exclude<KeyStatus, "PROCESSING">;

export interface IdempotencyStore<TTx extends SqlTransaction = SqlTransaction> {
  /** Inserts the key as PROCESSING with a fresh lease, or reports the row that already holds it. */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  read(scope: string, key: string): Promise<KeyRecord | null>;
  /**
   * Marks `record`'s lease as awaited (Prefer: wait), so that its settle announces itself; returns
   * the row if that lease still holds the key, null once it has settled or changed hands.
   */
  markAwaited(record: KeyRecord): Promise<KeyRecord | null>;
  /** PROCESSING with an expired lease → a new lease, attempts + 1. Null if someone else won. */
  takeOver(record: KeyRecord, request: ReserveRequest): Promise<KeyRecord | null>;
  /**
   * Past its retention → reserved anew for this request, as if absent. Null if someone else won.
   */
  renewExpired(record: KeyRecord, request: ReserveRequest): Promise<KeyRecord | null>;
  /** Runs `fn` in one transaction: the business write and `finish` commit together. */
  transaction<T>(fn: (tx: TTx) => Promise<T>, options: { timeoutMs: number }): Promise<T>;
  /**
   * Stores the key's final answer, fenced by the lease token: false if a retry took the lease
   * over. Inside the business transaction when `tx` is given (completion), on its own otherwise
   * (a deterministic failure, after the business rollback).
   */
  finish(
    record: KeyRecord,
    status: FinalStatus,
    response: StoredResponse,
    tx?: TTx,
  ): Promise<boolean>;
  /**
   * After the business transaction committed: true if PostgreSQL reported that its wait for the
   * synchronous standby was cancelled (committed locally, perhaps not replicated). Optional: a
   * store that cannot tell says nothing. Also forgets what it kept for `record`'s transaction.
   */
  commitUnconfirmed?(record: KeyRecord): boolean;
  /** Deletes the key (fenced) so a retry runs anew. */
  release(record: KeyRecord): Promise<boolean>;
  /**
   * The columns of the unique index named `index` (a driver that names only the index), in order.
   */
  indexColumns?(index: string): Promise<string[]>;
  /** Live (unexpired) keys in a scope, counted up to `limit`. */
  countLive(scope: string, limit: number): Promise<number>;
}
