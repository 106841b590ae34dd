// The idempotency protocol (DESIGN, steps 3–6), read top to bottom: reserve, execute in one
// transaction with the fenced completion, then one switch over how that transaction ended. Both
// entry points (the tRPC middleware and the plain wrapper) delegate here.
import { CounterEvent, KeyStatus } from "../constants.js";
import { IdempotencyError } from "../errors.js";
import { requestFingerprint, type RequestFingerprint } from "../fingerprint.js";
import { Reason } from "../reasons.js";
import { storeUnavailable } from "../store-refusal.js";
import { classifyStoreFailure } from "../store/unavailable.js";
import {
  uniqueViolationIn,
  uniqueViolationResponse,
  withFieldsNamed,
} from "../unique-violation.js";
import type { HandlerOutcome, Outcome } from "../outcome.js";
import type { KeyRecord, SqlTransaction, StoredResponse } from "../store/types.js";
import { acquire, inProgress, keyReused } from "./acquire.js";
import type { EngineDeps } from "./deps.js";
import { forStorage } from "./stored-size.js";
import { runTransaction, type TransactionResult } from "./transaction.js";
import { waitBudget, type WaitBudget } from "./wait.js";

export interface IdempotentRequest {
  /** Who the key belongs to: the authenticated tenant, or e.g. "provider:simpay" for webhooks. */
  scope: string;
  key: string;
  /** The operation's name (the tRPC path): part of the fingerprint. */
  procedure: string;
  input: unknown;
  /**
   * Prefer: wait: how long to wait for the key's first request, if it is in flight (capped by
   * maxWaitMs).
   */
  waitMs?: number;
  /**
   * Runs the request's sleep while it waits for another request to settle (Prefer: wait). A
   * server that bounds the requests it works on at once counts a sleeper out meanwhile: it holds
   * no connection, and is answered from one shared read when it wakes.
   */
  whileWaiting?: <T>(sleep: () => Promise<T>) => Promise<T>;
}

export type { HandlerOutcome, Outcome } from "../outcome.js";

export interface ExecuteOptions {
  /** false: the two-phase path, the handler called without a transaction (engine.execute). */
  transaction?: boolean;
}

const commitUnconfirmed = () =>
  new IdempotencyError(
    Reason.COMMIT_UNCONFIRMED,
    "Committed on the primary, but the synchronous standby did not confirm it; retry with the same key",
    { retryAfterSeconds: 1 },
  );

export async function executeIdempotently<TTx extends SqlTransaction>(
  deps: EngineDeps<TTx>,
  request: IdempotentRequest,
  handler: (tx: TTx) => Promise<HandlerOutcome>,
  options: ExecuteOptions = {},
): Promise<Outcome> {
  const wait = waitBudget(request.waitMs, deps.config, request.whileWaiting);
  try {
    const outcome = await run(deps, request, handler, wait, options);
    return wait?.applied ? { ...outcome, appliedWaitSeconds: wait.seconds } : outcome;
  } catch (error) {
    if (wait?.applied && error instanceof IdempotencyError) error.appliedWaitSeconds = wait.seconds;
    throw error;
  }
}

type Count = (event: CounterEvent) => void;

async function run<TTx extends SqlTransaction>(
  deps: EngineDeps<TTx>,
  request: IdempotentRequest,
  handler: (tx: TTx) => Promise<HandlerOutcome>,
  wait: WaitBudget | undefined,
  options: ExecuteOptions,
): Promise<Outcome> {
  const count: Count = (event) => deps.counters.increment(request.scope, request.procedure, event);
  const print = requestFingerprint(request.procedure, request.input);
  // Taken before anything is read: an eviction after it keeps this request's answer out of memory.
  const stamp = deps.replayCache?.stamp() ?? 0;
  const cached = replayFromMemory(deps, request, print, count);
  if (cached) return cached;
  const record = await reserve(deps, request, print, count, wait);
  if (record.status !== KeyStatus.PROCESSING) {
    count(CounterEvent.REPLAYED);
    return remember(deps, record, replayOf(record), stamp);
  }
  const inTransaction = options.transaction !== false;
  const result = await runTransaction(
    deps,
    record,
    handler as (tx?: TTx) => Promise<HandlerOutcome>,
    inTransaction,
  );
  return settle(deps, record, result, count, stamp);
}

/** The answer this instance remembers for the key, without a round trip; null if none. */
function replayFromMemory(
  deps: EngineDeps<any>,
  request: IdempotentRequest,
  print: RequestFingerprint,
  count: Count,
): Outcome | null {
  const cached = deps.replayCache?.get(request.scope, request.key, print);
  if (!cached) return null;
  if (cached.kind === "mismatch") {
    count(CounterEvent.MISMATCHES);
    throw keyReused();
  }
  count(CounterEvent.REPLAYED);
  return cached.outcome;
}

/** The key reserved for this request, or its settled record to replay; refusals are thrown. */
async function reserve(
  deps: EngineDeps<any>,
  request: IdempotentRequest,
  print: RequestFingerprint,
  count: Count,
  wait: WaitBudget | undefined,
): Promise<KeyRecord> {
  const { waitMs: _waitMs, whileWaiting: _whileWaiting, ...reserved } = request;
  const reserveRequest = {
    ...reserved,
    fingerprint: print.value,
    leaseMs: deps.config.leaseMs,
    ttlSeconds: deps.config.ttlSeconds,
  };
  try {
    return await acquire(deps, reserveRequest, print, count, wait);
  } catch (error) {
    if (error instanceof IdempotencyError) throw error;
    throw storeUnavailable(error, count);
  }
}

/** DESIGN steps 4–6: one switch over how the business transaction ended. */
async function settle(
  deps: EngineDeps<any>,
  record: KeyRecord,
  result: TransactionResult,
  count: Count,
  stamp: number,
): Promise<Outcome> {
  switch (result.kind) {
    case "completed":
      return completed(deps, record, result, count, stamp);
    case "deterministic":
      return storeFailure(deps, record, result.response, count, stamp);
    case "fenced":
      count(CounterEvent.FENCED);
      throw leaseTakenOver();
    case "handler_failed":
      return handlerFailed(deps, record, result.error, count, stamp);
    case "store_failed":
      // BEGIN, the completion or COMMIT failed (the connection lost during COMMIT included: the
      // outcome is unknown). If COMMIT did land, the key is COMPLETED and the fenced release
      // touches nothing: the retry reads it and replays.
      deps.store.commitUnconfirmed?.(record);
      await release(deps, record, count);
      throw storeUnavailable(result.error, count);
    default: {
      const unreachable: never = result;
      throw new Error(`unhandled transaction result ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The business transaction committed with the key's completion: the answer, remembered. */
function completed(
  deps: EngineDeps<any>,
  record: KeyRecord,
  result: Extract<TransactionResult, { kind: "completed" }>,
  count: Count,
  stamp: number,
): Outcome {
  // Committed locally, not confirmed by the standby: not an answer a failover cannot take back.
  // Not remembered either; the retry reads the key (and runs anew if a failover lost it).
  const unconfirmed = deps.store.commitUnconfirmed?.(record);
  return executed(deps, record, "success", result, count, stamp, unconfirmed);
}

/** The handler's answer, stored (`stored`: as forStorage kept it): counted and remembered. */
function executed(
  deps: EngineDeps<any>,
  record: KeyRecord,
  kind: Outcome["kind"],
  { response, stored }: { response: StoredResponse; stored: StoredResponse },
  count: Count,
  stamp: number,
  unconfirmed = false,
): Outcome {
  count(CounterEvent.EXECUTED);
  if (stored.omittedBytes !== undefined) count(CounterEvent.BODIES_OMITTED);
  if (unconfirmed) throw commitUnconfirmed();
  const outcome: Outcome = { kind, response, replayed: false, expiresAt: record.expiresAt };
  return remember(deps, record, outcome, stamp, stored);
}

function leaseTakenOver(): IdempotencyError {
  return inProgress("This request's lease was taken over by a retry; retry to get its answer", 1);
}

/**
 * The handler threw. Its own write hitting a unique constraint is deterministic (the same request
 * would again): stored and replayed. Anything else releases the key for a fresh retry.
 */
async function handlerFailed(
  deps: EngineDeps<any>,
  record: KeyRecord,
  error: unknown,
  count: Count,
  stamp: number,
): Promise<Outcome> {
  const conflict = uniqueViolationIn(error);
  if (conflict) {
    const named = await withFieldsNamed(conflict, deps.store.indexColumns?.bind(deps.store));
    return storeFailure(deps, record, uniqueViolationResponse(named), count, stamp);
  }
  await release(deps, record, count);
  if (classifyStoreFailure(error) === null) throw error; // the handler's own error, passed on
  throw storeUnavailable(error, count);
}

/** The business transaction rolled back; store the failure for retries to replay. */
async function storeFailure(
  deps: EngineDeps<any>,
  record: KeyRecord,
  response: StoredResponse,
  count: Count,
  stamp: number,
): Promise<Outcome> {
  const stored = forStorage(response, deps.config.maxStoredBodyBytes);
  let finished: boolean;
  try {
    finished = await deps.store.finish(record, KeyStatus.FAILED, stored);
  } catch (error) {
    await release(deps, record, count); // nothing committed, nothing recorded: a retry runs anew
    throw storeUnavailable(error, count);
  }
  if (!finished) {
    count(CounterEvent.FENCED);
    throw leaseTakenOver();
  }
  return executed(deps, record, "deterministic", { response, stored }, count, stamp);
}

/** Frees the key for the retry; if the store is gone, keeps trying until it is back. */
async function release(deps: EngineDeps<any>, record: KeyRecord, count: Count): Promise<void> {
  try {
    if (await deps.store.release(record)) count(CounterEvent.RELEASED);
  } catch {
    deps.pendingReleases.add(record, () => count(CounterEvent.RELEASED));
  }
}

function replayOf(record: KeyRecord): Outcome {
  const omittedBytes = record.responseOmittedBytes ?? undefined;
  const response: StoredResponse = {
    status: record.responseStatus ?? 200,
    // Rows stored before the HTTP layer have text only; an answer with bytes or without its body
    // has "".
    body: record.responseBody ?? (record.responseBytes || omittedBytes !== undefined ? "" : "null"),
    contentType: record.responseContentType ?? "application/json",
  };
  if (record.responseBytes) response.bytes = record.responseBytes;
  if (record.responseHeaders) response.headers = record.responseHeaders;
  if (omittedBytes !== undefined) response.omittedBytes = omittedBytes;
  return {
    kind: record.status === KeyStatus.COMPLETED ? "success" : "deterministic",
    response,
    replayed: true,
    expiresAt: record.expiresAt,
  };
}

/**
 * Caches the answer as stored (`stored`: without a body too large to store), returns it as
 * answered.
 */
function remember(
  deps: EngineDeps<any>,
  record: KeyRecord,
  outcome: Outcome,
  stamp: number,
  stored = outcome.response,
): Outcome {
  deps.replayCache?.put(record, { ...outcome, response: stored }, stamp);
  return outcome;
}
