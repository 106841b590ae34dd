// The idempotency protocol (DESIGN.md, steps 3–7), read top to bottom as a state machine. Both
// entry points (the tRPC middleware and the plain wrapper) delegate here.
import type { EngineConfig } from "./config";
import { CounterEvent, KeyStatus } from "./constants";
import type { Counters } from "./counters";
import {
  IdempotencyError,
  KeyReusedError,
  LeaseLostError,
  RequestInProgressError,
  StoreUnavailableError,
  TooManyKeysError,
} from "./errors";
import { fingerprint } from "./fingerprint";
import type { IdempotencyStore, KeyRecord, ReserveRequest, StoredOutcome, Tx } from "./store";

export interface EngineDeps {
  store: IdempotencyStore;
  config: EngineConfig;
  counters: Counters;
}

export interface IdempotentRequest {
  /** Who the key belongs to: the authenticated tenant, or e.g. "provider:simpay" for webhooks. */
  scope: string;
  key: string;
  /** The operation's name (the tRPC path): part of the fingerprint. */
  procedure: string;
  input: unknown;
}

/**
 * What the handler produced. `success` commits with the key; `deterministic` is a 4xx the handler
 * chose (out of stock): the business transaction rolls back, the key stores it and retries replay
 * it. Anything the handler throws is transient: the key is released so a retry runs anew.
 */
export type HandlerOutcome =
  | { kind: "success"; status: number; body: unknown }
  | { kind: "deterministic"; status: number; body: unknown };

export interface Outcome {
  kind: HandlerOutcome["kind"];
  status: number;
  body: unknown;
  replayed: boolean;
  /** When the key's record expires (Idempotency-Key-Expires). */
  expiresAt: Date;
}

/** What to do with a key someone already holds: the protocol's decision, one case per rule. */
type Decision =
  | { action: "replay"; record: KeyRecord }
  | { action: "mismatch"; record: KeyRecord }
  | { action: "wait"; record: KeyRecord; retryAfterSeconds: number }
  | { action: "take_over"; record: KeyRecord }
  | { action: "renew"; record: KeyRecord }
  | { action: "vanished" };

export function decide(existing: KeyRecord | null, requestFingerprint: string, config: EngineConfig): Decision {
  if (!existing) return { action: "vanished" }; // released or reaped between our insert and read
  const now = existing.dbNow.getTime();
  if (existing.expiresAt.getTime() <= now) return { action: "renew", record: existing };
  if (existing.fingerprint !== requestFingerprint) return { action: "mismatch", record: existing };
  const status = existing.status;
  switch (status) {
    case KeyStatus.COMPLETED:
    case KeyStatus.FAILED:
      return { action: "replay", record: existing };
    case KeyStatus.PROCESSING: {
      const leaseLeftMs = (existing.leaseExpiresAt?.getTime() ?? 0) - now;
      if (leaseLeftMs <= 0) return { action: "take_over", record: existing };
      return { action: "wait", record: existing, retryAfterSeconds: retryAfter(leaseLeftMs, config) };
    }
    default: {
      const unreachable: never = status;
      throw new Error(`unknown key status ${String(unreachable)}`);
    }
  }
}

function retryAfter(leaseLeftMs: number, config: EngineConfig): number {
  // A typical request finishes long before its lease ends: suggest coming back soon, but never
  // later than the moment the lease could be taken over.
  return Math.max(config.minRetryAfterSeconds, Math.min(Math.ceil(leaseLeftMs / 1000), 2));
}

/** Connection refused, timeouts, pool exhaustion: anything from the store that is not a decision. */
function storeUnavailable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError("The idempotency key store cannot be reached; nothing was executed", {
    cause,
    retryAfterSeconds: 1,
  });
}

/** Marks an error as the handler's own (a 5xx to pass on), not the store's. */
class HandlerFailure {
  constructor(readonly cause: unknown) {}
}

/** Carries a deterministic failure out of the transaction callback, so the transaction rolls back. */
class RollbackWith {
  constructor(readonly outcome: HandlerOutcome) {}
}

export async function executeIdempotently(
  deps: EngineDeps,
  request: IdempotentRequest,
  handler: (tx: Tx) => Promise<HandlerOutcome>,
): Promise<Outcome> {
  const { store, config, counters } = deps;
  const count = (event: CounterEvent) => counters.increment(request.scope, request.procedure, event);
  const reserveRequest: ReserveRequest = {
    scope: request.scope,
    key: request.key,
    procedure: request.procedure,
    fingerprint: fingerprint(request.procedure, request.input),
    leaseMs: config.leaseMs,
    ttlSeconds: config.ttlSeconds,
  };

  // Reserve: the unique constraint on (scope, key) decides every race.
  let record: KeyRecord;
  try {
    record = await acquire(deps, reserveRequest, count);
  } catch (error) {
    if (error instanceof IdempotencyError) throw error;
    count(CounterEvent.STORE_ERRORS);
    throw storeUnavailable(error);
  }
  if (record.status !== KeyStatus.PROCESSING) {
    count(CounterEvent.REPLAYED);
    return replayOf(record);
  }

  // Execute: the handler's writes and the key's completion commit together, or not at all.
  let outcome: HandlerOutcome;
  try {
    outcome = await store.transaction(
      async (tx) => {
        const result = await handler(tx).catch((error: unknown) => {
          throw new HandlerFailure(error);
        });
        if (result.kind === "deterministic") throw new RollbackWith(result);
        const stored: StoredOutcome = { status: result.status, body: result.body };
        // Fencing: if a retry took our lease over, no row matches and we roll back.
        if (!(await store.complete(tx, record, stored))) throw new LeaseLostError(1);
        return result;
      },
      { timeoutMs: config.transactionTimeoutMs },
    );
  } catch (error) {
    if (error instanceof LeaseLostError) {
      count(CounterEvent.FENCED);
      throw error;
    }
    if (error instanceof RollbackWith) {
      outcome = error.outcome;
      // The business transaction rolled back; store the failure for retries to replay.
      let stored: boolean;
      try {
        stored = await store.fail(record, { status: outcome.status, body: outcome.body });
      } catch (storeError) {
        count(CounterEvent.STORE_ERRORS);
        throw storeUnavailable(storeError); // nothing committed, nothing recorded: a retry runs anew
      }
      if (!stored) {
        count(CounterEvent.FENCED);
        throw new LeaseLostError(1);
      }
    } else {
      // Transient: release the key so the retry runs anew. If the store is down the release fails
      // too; the lease then expires and the next request takes over. (If the store failed at
      // COMMIT and the commit did land, the key is COMPLETED and the fenced release touches
      // nothing: the retry replays.)
      if (await store.release(record).catch(() => false)) count(CounterEvent.RELEASED);
      if (error instanceof HandlerFailure) throw error.cause;
      // Not the handler: the store failed us (BEGIN, the completion, COMMIT, a timeout). Fail closed.
      count(CounterEvent.STORE_ERRORS);
      throw storeUnavailable(error);
    }
  }
  count(CounterEvent.EXECUTED);
  return { kind: outcome.kind, status: outcome.status, body: outcome.body, replayed: false, expiresAt: record.expiresAt };
}

/** Returns our PROCESSING record (fresh, taken over or renewed), or a finished one to replay. */
async function acquire(deps: EngineDeps, r: ReserveRequest, count: (e: CounterEvent) => void): Promise<KeyRecord> {
  const { store, config } = deps;
  // Bounded: each pass either returns or saw the row change under it (released, reaped, renewed).
  for (let attempt = 0; attempt < 3; attempt++) {
    // At the cap, a retry of a key the scope already holds still gets its answer: only new keys
    // are refused, so we read instead of inserting.
    const overCap = await isOverLiveKeyCap(deps, r.scope);
    const reserved = overCap ? { reserved: false as const, existing: await store.read(r.scope, r.key) } : await store.reserve(r);
    if (reserved.reserved) return reserved.record;
    const decision = decide(reserved.existing, r.fingerprint, config);
    if (overCap && (decision.action === "vanished" || decision.action === "renew")) {
      count(CounterEvent.TOO_MANY_KEYS);
      throw new TooManyKeysError(`This account holds ${config.maxLiveKeys} live idempotency keys, the most allowed`, {
        retryAfterSeconds: 60,
      });
    }
    switch (decision.action) {
      case "replay":
        return decision.record;
      case "mismatch":
        count(CounterEvent.MISMATCHES);
        throw new KeyReusedError(decision.record);
      case "wait":
        count(CounterEvent.CONFLICTS);
        throw new RequestInProgressError("A request with this Idempotency-Key is still in progress", decision.retryAfterSeconds, decision.record);
      case "take_over": {
        const taken = await store.takeOver(decision.record, r);
        if (taken) {
          count(CounterEvent.TAKEOVERS);
          return taken;
        }
        count(CounterEvent.CONFLICTS); // another retry took it over first
        throw new RequestInProgressError("Another retry took over this Idempotency-Key", 1, decision.record);
      }
      case "renew": {
        const renewed = await store.renewExpired(decision.record, r);
        if (renewed) return renewed;
        continue; // someone else renewed or reaped it: look again
      }
      case "vanished":
        continue;
      default: {
        const unreachable: never = decision;
        throw new Error(`unhandled decision ${JSON.stringify(unreachable)}`);
      }
    }
  }
  throw new RequestInProgressError("This Idempotency-Key is changing hands; retry shortly", 1);
}

/** Per store (so per database), per scope: the last live-key count and when it was taken. */
const liveKeyCounts = new WeakMap<IdempotencyStore, Map<string, { count: number; at: number }>>();

async function isOverLiveKeyCap(deps: EngineDeps, scope: string): Promise<boolean> {
  let byScope = liveKeyCounts.get(deps.store);
  if (!byScope) liveKeyCounts.set(deps.store, (byScope = new Map()));
  let cached = byScope.get(scope);
  if (!cached || Date.now() - cached.at >= deps.config.liveKeyCountTtlMs) {
    cached = { count: await deps.store.countLive(scope, deps.config.maxLiveKeys), at: Date.now() };
    byScope.set(scope, cached);
  }
  return cached.count >= deps.config.maxLiveKeys;
}

function replayOf(record: KeyRecord): Outcome {
  return {
    kind: record.status === KeyStatus.COMPLETED ? "success" : "deterministic",
    status: record.responseStatus ?? 200,
    body: record.responseBody,
    replayed: true,
    expiresAt: record.expiresAt,
  };
}
