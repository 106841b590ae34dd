// The outbox worker: delivers checkout's payment rows to the provider after the order committed.
// Claim a batch (FOR UPDATE SKIP LOCKED + a lease) → charge each under its intent's provider key, a
// few at a time → record the batch's charges and mark its rows DELIVERED in one statement, fenced
// by each row's attempt number. A crash at any point leaves rows PENDING; once the lease ends
// another worker retries with the same keys and the provider returns the first charges: never a
// second one.
import { Prisma } from "../generated/prisma/client";
import type { Db } from "./db";
import { backoffMs } from "./backoff";
import { DEFAULT_OUTBOX_CONFIG, type OutboxConfig } from "./config";
import { mapBounded } from "./bounded";
import { applyPaymentOutcome, movesForward, orderById } from "./order-payment";
import { takesOrderTotal } from "./charge-mismatch";
import { chargeSubject, FindingKind, type Finding } from "./books/finding";
import { logFinding } from "./books/finding-log";
import { PAYMENT_TOPIC, paymentPayload } from "./outbox-message";
import {
  createProviderReachability,
  type ProviderReachability,
  type ReachabilityLogger,
} from "./provider-reachability";
import {
  ChargeStatus,
  KEY_REUSED,
  ProviderRefusedError,
  type Charge,
  type PaymentProvider,
} from "./provider";

export interface ClaimedMessage {
  id: string;
  idempotencyKey: string;
  payload: unknown;
  /** This claim's attempt number: the fencing token for everything we write about the row. */
  attempts: number;
}

export interface OutboxWorkerOptions {
  provider: PaymentProvider;
  config?: Partial<OutboxConfig>;
  /** Tests move time forward with this; by default every time is the database's `now()`. */
  clock?: () => Date;
  random?: () => number;
  hooks?: {
    /** After the provider answered, before anything is recorded (the crash test stops here). */
    afterCharge?: (message: ClaimedMessage, charge: Charge) => void | Promise<void>;
  };
  /**
   * The worker's logger (pino in the server and `npm run worker`; silent when absent): each failed
   * attempt at debug level, a refusal and a takeover as they happen, and the provider's
   * reachability as two lines per outage (provider-reachability.ts).
   */
  logger?: WorkerLogger;
  /** Tests move the reachability tracker's clock with this; by default Date.now. */
  now?: () => number;
}

export interface WorkerLogger extends ReachabilityLogger {
  debug(fields: object, message: string): void;
}

const SILENT: WorkerLogger = { debug() {}, info() {}, warn() {} };

export interface OutboxRunResult {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  /** Rows whose lease another worker took over meanwhile: that worker records the result. */
  fenced: number;
}

interface Charged {
  kind: "charged";
  message: ClaimedMessage;
  orderId: string;
  charge: Charge;
}

interface Failed {
  kind: "failed";
  message: ClaimedMessage;
  orderId: string | null;
  error: unknown;
  /** No attempt left (or none can help): the row goes to the dead letters. */
  final: boolean;
}

const describeError = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** What every statement of a worker needs: its database, options, configuration and clock. */
interface WorkerContext {
  db: Db;
  options: OutboxWorkerOptions;
  config: OutboxConfig;
  random: () => number;
  logger: WorkerLogger;
  /** What the sends say of the provider: down, or back (one line each). */
  reachability: ProviderReachability;
  /** The time in SQL: the database's now(), or the test's clock. */
  now: () => Prisma.Sql;
  after: (ms: number) => Prisma.Sql;
}

export function createOutboxWorker(db: Db, options: OutboxWorkerOptions) {
  const config: OutboxConfig = { ...DEFAULT_OUTBOX_CONFIG, ...options.config };
  const now = () =>
    options.clock ? Prisma.sql`${options.clock().toISOString()}::timestamptz` : Prisma.sql`now()`;
  const w: WorkerContext = {
    db,
    options,
    config,
    random: options.random ?? Math.random,
    logger: options.logger ?? SILENT,
    reachability: createProviderReachability(options.logger ?? SILENT, options.now),
    now,
    after: (ms) => Prisma.sql`(${now()} + make_interval(secs => ${ms / 1000}::float8))`,
  };
  return {
    config,
    /**
     * One round: claim a batch, call the provider for its rows a few at a time, then record the
     * deliveries in one statement and the retries in another. Returns what happened.
     */
    runOnce: () => runOnce(w),
  };
}

async function runOnce(w: WorkerContext): Promise<OutboxRunResult> {
  const messages = await claim(w);
  const result: OutboxRunResult = {
    claimed: messages.length,
    delivered: 0,
    retried: 0,
    dead: 0,
    fenced: 0,
  };
  if (messages.length === 0) return result;
  const outcomes = await mapBounded(messages, w.config.concurrency, (m) => attempt(w, m));
  const charged = outcomes.filter((o): o is Charged => o.kind === "charged");
  const failed = outcomes.filter((o): o is Failed => o.kind === "failed");
  const delivered = await recordDeliveries(w, charged);
  const retried = await recordRetries(
    w,
    failed.filter((f) => !f.final),
  );
  for (const c of charged) result[delivered.has(c.message.id) ? "delivered" : "fenced"]++;
  for (const f of failed)
    result[
      f.final
        ? await deadLetter(w, f.message, f.orderId, f.error)
        : retried.has(f.message.id)
          ? "retried"
          : "fenced"
    ]++;
  return result;
}

/**
 * One statement: pick due, unleased rows (skipping rows another worker is claiming), lease them.
 */
async function claim(w: WorkerContext): Promise<ClaimedMessage[]> {
  return w.db.$queryRaw<ClaimedMessage[]>`
    UPDATE "OutboxMessage" AS m
    SET "lockedUntil" = ${w.after(w.config.leaseMs)}, "attempts" = m."attempts" + 1, "updatedAt" = ${w.now()}
    WHERE m."id" IN (
      SELECT "id" FROM "OutboxMessage"
      WHERE "topic" = ${PAYMENT_TOPIC} AND "status" = 'PENDING' AND "nextAttemptAt" <= ${w.now()}
        AND ("lockedUntil" IS NULL OR "lockedUntil" <= ${w.now()})
      ORDER BY "nextAttemptAt"
      LIMIT ${w.config.batchSize}
      FOR UPDATE SKIP LOCKED)
    RETURNING m."id"::text AS "id", m."idempotencyKey", m."payload", m."attempts"`;
}

/**
 * The batch's deliveries in one statement: mark each charged row DELIVERED (fenced by its attempt
 * number) and move its order forward, so the charge id goes on the order in the same commit as
 * DELIVERED. Returns the ids it marked; a row missing from them was taken over meanwhile.
 */
async function recordDeliveries(
  w: WorkerContext,
  charged: readonly Charged[],
): Promise<Set<string>> {
  if (charged.length === 0) return new Set();
  const column = <T>(pick: (c: Charged) => T) => charged.map(pick);
  const rows = await w.db.$queryRaw<{ id: string | null; finding: Finding | null }[]>`
    WITH delivered AS (
      SELECT * FROM unnest(${column((c) => c.message.id)}::uuid[], ${column((c) => c.message.attempts)}::int[],
                           ${column((c) => c.orderId)}::text[], ${column((c) => c.charge.id)}::text[],
                           ${column((c) => (c.charge.status === ChargeStatus.SUCCEEDED ? "PAID" : "PAYMENT_FAILED"))}::text[],
                           ${column((c) => JSON.stringify({ chargeId: c.charge.id, status: c.charge.status, replayed: c.charge.replayed }))}::text[],
                           ${column((c) => c.charge.amountCents)}::int[], ${column((c) => c.charge.currency)}::text[])
        AS d("id", "attempts", "orderId", "chargeId", "outcome", "result", "amountCents", "currency")
    ), marked AS (
      UPDATE "OutboxMessage" AS m
      SET "status" = 'DELIVERED', "result" = d."result"::jsonb, "deliveredAt" = ${w.now()}, "lockedUntil" = NULL,
          "lastError" = NULL, "updatedAt" = ${w.now()}
      FROM delivered AS d
      WHERE m."id" = d."id" AND m."status" = 'PENDING' AND m."attempts" = d."attempts"
      RETURNING m."id", d."orderId", d."chargeId", d."outcome", d."amountCents", d."currency"
    ), moved AS (
      UPDATE "Order" AS o
      SET "status" = k."outcome"::"OrderStatus", "chargeId" = COALESCE(o."chargeId", k."chargeId"), "updatedAt" = now()
      FROM marked AS k
      WHERE ${orderById(Prisma.sql`k."orderId"`)} AND ${movesForward(Prisma.sql`k."outcome"`)}
        AND ${takesOrderTotal(Prisma.sql`k."amountCents"`, Prisma.sql`k."currency"`)}
    ), mismatched AS (${refusedCharges()})
    SELECT "id"::text AS "id", NULL::jsonb AS "finding" FROM marked
    UNION ALL SELECT NULL, to_jsonb(f) FROM mismatched AS f`;
  for (const row of rows) if (row.finding) logFinding(row.finding, "new", "worker", w.logger);
  return new Set(rows.flatMap((row) => (row.id ? [row.id] : [])));
}

/**
 * For recordDeliveries: a charge the provider answered with another amount or currency than the
 * order's (a key someone else used first) does not move the order, and is a finding (the one
 * reconciliation would record: books/judge.ts, amountMismatch), returned to be logged.
 */
function refusedCharges(): Prisma.Sql {
  const kind = FindingKind.AMOUNT_MISMATCH;
  return Prisma.sql`
      INSERT INTO "ReconciliationFinding" ("kind", "dedupeKey", "subject", "orderId", "chargeIds", "details")
      SELECT ${kind}::"FindingKind", ${`${kind}:`} || o."id"::text || ',' || k."chargeId", ${chargeSubject("")} || k."chargeId", o."id"::text, ARRAY[k."chargeId"],
             jsonb_build_object('orderTotalCents', o."totalCents", 'chargedCents', k."amountCents",
                                'orderCurrency', o."currency", 'chargeCurrency', k."currency", 'refusedBy', 'worker')
      FROM marked AS k JOIN "Order" AS o ON ${orderById(Prisma.sql`k."orderId"`)}
      WHERE NOT ${takesOrderTotal(Prisma.sql`k."amountCents"`, Prisma.sql`k."currency"`)}
      ON CONFLICT ("dedupeKey") DO NOTHING
      RETURNING "kind"::text AS "kind", "dedupeKey", "subject", "orderId", "chargeIds"`;
}

/** The batch's transient failures in one statement: each row due again after its own backoff. */
async function recordRetries(w: WorkerContext, failed: readonly Failed[]): Promise<Set<string>> {
  if (failed.length === 0) return new Set();
  const waitsSeconds = failed.map((f) => backoffMs(f.message.attempts, w.config, w.random) / 1000);
  const marked = await w.db.$queryRaw<{ id: string }[]>`
    UPDATE "OutboxMessage" AS m
    SET "nextAttemptAt" = ${w.now()} + make_interval(secs => r."wait"), "lockedUntil" = NULL, "lastError" = r."error", "updatedAt" = ${w.now()}
    FROM unnest(${failed.map((f) => f.message.id)}::uuid[], ${failed.map((f) => f.message.attempts)}::int[],
                ${waitsSeconds}::float8[], ${failed.map((f) => describeError(f.error))}::text[]) AS r("id", "attempts", "wait", "error")
    WHERE m."id" = r."id" AND m."status" = 'PENDING' AND m."attempts" = r."attempts"
    RETURNING m."id"::text AS "id"`;
  return new Set(marked.map((row) => row.id));
}

/**
 * Past the bound: dead-letter the row and tell the order its payment failed (once per row's
 * life).
 */
async function deadLetter(
  w: WorkerContext,
  message: ClaimedMessage,
  orderId: string | null,
  error: unknown,
): Promise<"dead" | "fenced"> {
  return w.db.$transaction(async (tx) => {
    const marked = await tx.$executeRaw`
      UPDATE "OutboxMessage" SET "status" = 'DEAD', "lastError" = ${describeError(error)}, "lockedUntil" = NULL, "updatedAt" = ${w.now()}
      WHERE "id" = ${message.id}::uuid AND "status" = 'PENDING' AND "attempts" = ${message.attempts}`;
    if (marked !== 1) return "fenced";
    if (orderId) await applyPaymentOutcome(tx, orderId, "PAYMENT_FAILED", null);
    return "dead";
  });
}

/** One provider call; what happened, to be recorded with the rest of the batch. */
async function attempt(w: WorkerContext, message: ClaimedMessage): Promise<Charged | Failed> {
  const payload = paymentPayload.safeParse(message.payload);
  // A row nobody can deliver: retrying cannot fix it, so it goes straight to the dead letters.
  if (!payload.success)
    return {
      kind: "failed",
      message,
      orderId: null,
      error: new Error("malformed payment payload"),
      final: true,
    };
  const { orderId, amountCents, currency } = payload.data;
  let charge: Charge;
  try {
    charge = await chargeOrTakeOver(w, message, { orderId, amountCents, currency });
  } catch (error) {
    // A refusal is the provider's answer to this request: the same request gets it again, so it
    // is recorded at once with its reason. Anything else (unreachable, 5xx, 408/409/429, no
    // answer) is retried with the same key until the bound.
    const refused = error instanceof ProviderRefusedError;
    const final = refused || message.attempts >= w.config.maxAttempts;
    const fields = { outboxId: message.id, orderId, attempt: message.attempts, final };
    const text = `[outbox] ${message.id} attempt ${message.attempts}: ${(error as Error).message}`;
    if (refused) {
      // The provider answered: it is there, and the refusal is this order's, worth its line.
      w.reachability.answered();
      w.logger.warn(fields, `${text} (not retried)`);
    } else {
      // One line per attempt per order during an outage is noise: the outage itself is said once
      // by the reachability tracker; each attempt is for whoever turns debug on.
      w.reachability.failed(message.id, error);
      w.logger.debug(fields, text);
      if (final) w.logger.warn(fields, `${text}: attempts spent, dead-lettered`);
    }
    return { kind: "failed", message, orderId, error, final };
  }
  w.reachability.answered();
  await w.options.hooks?.afterCharge?.(message, charge);
  return { kind: "charged", message, orderId, charge };
}

/**
 * Charges the order under the row's key. When the provider refuses because the key was used
 * before with other parameters, the customer may already have paid: the order was lost (a
 * restore, a failover) and the intent placed again made a new order, whose id (the charge's
 * reference) is not the first one's. The charge the provider holds under the key is the
 * customer's payment for this intent, so the new order takes it over; recordDeliveries pays the
 * order with it only if it took the order's total in its currency, else records a finding naming
 * both. No charge under the key: the refusal stands.
 */
async function chargeOrTakeOver(
  w: WorkerContext,
  message: ClaimedMessage,
  order: { orderId: string; amountCents: number; currency: string },
): Promise<Charge> {
  try {
    return await w.options.provider.charge({
      idempotencyKey: message.idempotencyKey,
      reference: order.orderId,
      amountCents: order.amountCents,
      currency: order.currency,
    });
  } catch (error) {
    if (!(error instanceof ProviderRefusedError) || error.type !== KEY_REUSED) throw error;
    const { data } = await w.options.provider.listCharges({
      idempotencyKey: message.idempotencyKey,
      limit: 1,
    });
    const held = data[0];
    if (!held) throw error;
    w.logger.info(
      { outboxId: message.id, orderId: order.orderId, chargeId: held.id },
      `[outbox] ${message.id}: the key already holds charge ${held.id} (reference ${held.reference}); order ${order.orderId} takes it over`,
    );
    const { created: _created, ...charge } = held;
    return { ...charge, replayed: true };
  }
}

export type OutboxWorker = ReturnType<typeof createOutboxWorker>;
