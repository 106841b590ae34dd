// Reservation: returns our PROCESSING record (fresh, taken over or renewed), or a finished one to
// replay; every other answer is an IdempotencyError. The unique constraint on (scope, key)
// decides every race.
import { CounterEvent } from "../constants.js";
import { IdempotencyError } from "../errors.js";
import type { RequestFingerprint } from "../fingerprint.js";
import { Reason } from "../reasons.js";
import type { KeyRecord, ReserveRequest } from "../store/types.js";
import { decide, type Decision } from "./decide.js";
import type { EngineDeps, LiveKeyCount } from "./deps.js";
import { waitForSettle, type WaitBudget } from "./wait.js";

/**
 * Each pass either returns or saw the row change under it (released, reaped, renewed). A wait
 * (Prefer: wait) is not a pass: it is bounded by its own deadline.
 */
const MAX_PASSES = 3;

export async function acquire(
  deps: EngineDeps,
  r: ReserveRequest,
  print: RequestFingerprint,
  count: (e: CounterEvent) => void,
  wait?: WaitBudget,
): Promise<KeyRecord> {
  let woken = false;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    // At the cap, a retry of a key the scope already holds still gets its answer: only new keys
    // are refused, so we read instead of inserting. After a wait we read too: the key most likely
    // settled, and the store shares one read among every request woken on it (a reservation
    // each would take a pool connection each); if it was released, the next pass reserves it.
    const overCap = await isOverLiveKeyCap(deps, r.scope);
    const reserved =
      overCap || woken
        ? { reserved: false as const, existing: await deps.store.read(r.scope, r.key) }
        : await deps.store.reserve(r);
    woken = false;
    if (reserved.reserved) return reserved.record;
    const decision = decide(reserved.existing, print, deps.config);
    if (overCap && (decision.action === "vanished" || decision.action === "renew")) {
      count(CounterEvent.TOO_MANY_KEYS);
      const message = `This account already holds the most live idempotency keys allowed (${deps.config.maxLiveKeys}); new keys are refused until older ones expire`;
      throw new IdempotencyError(Reason.TOO_MANY_KEYS, message, { retryAfterSeconds: 60 });
    }
    const next = await follow(deps, r, decision, count, wait);
    if (next.kind === "record") return next.record;
    if (next.kind === "woken") {
      pass--; // woken, or the wait or the lease ran out: look at the key once more
      woken = true;
    }
  }
  throw inProgress("This Idempotency-Key is changing hands; retry shortly", 1);
}

/** What a pass ends in: the record to return, or another look at the key (after a wait or not). */
type Next = { kind: "record"; record: KeyRecord } | { kind: "again" } | { kind: "woken" };

/** Acts on what the existing row says; refusals are thrown. */
async function follow(
  deps: EngineDeps,
  r: ReserveRequest,
  decision: Decision,
  count: (e: CounterEvent) => void,
  wait?: WaitBudget,
): Promise<Next> {
  switch (decision.action) {
    case "replay":
      return { kind: "record", record: decision.record };
    case "mismatch":
      count(CounterEvent.MISMATCHES);
      throw keyReused(decision.record);
    case "wait":
      if (wait && (await waitForSettle(deps, r, decision.record, wait))) return { kind: "woken" };
      count(CounterEvent.CONFLICTS);
      throw inProgress(
        "A request with this Idempotency-Key is still in progress",
        decision.retryAfterSeconds,
        decision.record,
      );
    case "take_over":
      return { kind: "record", record: await takeOver(deps, r, decision.record, count) };
    case "renew": {
      const renewed = await deps.store.renewExpired(decision.record, r);
      // null: someone else renewed or reaped it: look again
      return renewed ? { kind: "record", record: renewed } : { kind: "again" };
    }
    case "vanished":
      return { kind: "again" };
    default: {
      const unreachable: never = decision;
      throw new Error(`unhandled decision ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The expired lease taken over for this request, unless another retry took it first. */
async function takeOver(
  deps: EngineDeps,
  r: ReserveRequest,
  record: KeyRecord,
  count: (e: CounterEvent) => void,
): Promise<KeyRecord> {
  const taken = await deps.store.takeOver(record, r);
  if (taken) {
    count(CounterEvent.TAKEOVERS);
    return taken;
  }
  count(CounterEvent.CONFLICTS); // another retry took it over first
  throw inProgress("Another retry took over this Idempotency-Key", 1, record);
}

export const keyReused = (record?: KeyRecord) =>
  new IdempotencyError(
    Reason.KEY_REUSED,
    "This Idempotency-Key was already used for a different request",
    { record },
  );

export function inProgress(
  message: string,
  retryAfterSeconds: number,
  record?: KeyRecord,
): IdempotencyError {
  return new IdempotencyError(Reason.IN_PROGRESS, message, { retryAfterSeconds, record });
}

/**
 * Whether the scope holds its most live keys, from a count at most `liveKeyCountTtlMs` old. One
 * count per scope is taken at a time, and every request of the scope that needs one meanwhile
 * joins it: a thousand `Prefer: wait` duplicates woken on one key, after a wait longer than the
 * count lives, sent a thousand counts at once, and the pool refused those it could not serve
 * within its wait (503 store_busy). A count that failed is not kept.
 */
async function isOverLiveKeyCap(deps: EngineDeps, scope: string): Promise<boolean> {
  const byScope = deps.liveKeyCounts;
  let cached = byScope.get(scope);
  const stale = cached?.at !== undefined && Date.now() - cached.at >= deps.config.liveKeyCountTtlMs;
  if (!cached || stale) {
    const taking: LiveKeyCount = {
      count: deps.store.countLive(scope, deps.config.maxLiveKeys).then(
        (n) => {
          taking.at = Date.now();
          return n;
        },
        (error: unknown) => {
          if (byScope.get(scope) === taking) byScope.delete(scope);
          throw error;
        },
      ),
    };
    byScope.set(scope, taking);
    cached = taking;
  }
  return (await cached.count) >= deps.config.maxLiveKeys;
}
