// The outbox worker: delivers checkout's payment rows to the provider after the order committed.
// Claim (FOR UPDATE SKIP LOCKED + a lease) → charge under the order's provider key → record the
// charge and mark the row DELIVERED in one transaction, fenced by the attempt number. A crash at
// any point leaves the row PENDING; once the lease ends another worker retries with the same key
// and the provider returns the first charge: never a second one.
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";
import { backoffMs } from "./backoff";
import { DEFAULT_OUTBOX_CONFIG, type OutboxConfig } from "./config";
import { applyPaymentOutcome } from "./order-payment";
import { PAYMENT_TOPIC, paymentPayload } from "./outbox-message";
import { ChargeStatus, type Charge, type PaymentProvider } from "./provider";

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
  log?: (message: string) => void;
}

export interface OutboxRunResult {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  /** Rows whose lease another worker took over meanwhile: that worker records the result. */
  fenced: number;
}

export function createOutboxWorker(db: Db, options: OutboxWorkerOptions) {
  const config: OutboxConfig = { ...DEFAULT_OUTBOX_CONFIG, ...options.config };
  const random = options.random ?? Math.random;
  const now = () => (options.clock ? Prisma.sql`${options.clock().toISOString()}::timestamptz` : Prisma.sql`now()`);
  const after = (ms: number) => Prisma.sql`(${now()} + make_interval(secs => ${ms / 1000}::float8))`;

  /** One statement: pick due, unleased rows (skipping rows another worker is claiming), lease them. */
  async function claim(): Promise<ClaimedMessage[]> {
    return db.$queryRaw<ClaimedMessage[]>`
      UPDATE "OutboxMessage" AS m
      SET "lockedUntil" = ${after(config.leaseMs)}, "attempts" = m."attempts" + 1, "updatedAt" = ${now()}
      WHERE m."id" IN (
        SELECT "id" FROM "OutboxMessage"
        WHERE "topic" = ${PAYMENT_TOPIC} AND "status" = 'PENDING' AND "nextAttemptAt" <= ${now()}
          AND ("lockedUntil" IS NULL OR "lockedUntil" <= ${now()})
        ORDER BY "nextAttemptAt"
        LIMIT ${config.batchSize}
        FOR UPDATE SKIP LOCKED)
      RETURNING m."id"::text AS "id", m."idempotencyKey", m."payload", m."attempts"`;
  }

  /** The charge id goes on the order and the row before (in the same commit as) DELIVERED. */
  async function recordDelivery(message: ClaimedMessage, orderId: string, charge: Charge): Promise<boolean> {
    return db.$transaction(async (tx) => {
      const result = { chargeId: charge.id, status: charge.status, replayed: charge.replayed };
      const marked = await tx.$executeRaw`
        UPDATE "OutboxMessage"
        SET "status" = 'DELIVERED', "result" = ${JSON.stringify(result)}::jsonb, "deliveredAt" = ${now()},
            "lockedUntil" = NULL, "lastError" = NULL, "updatedAt" = ${now()}
        WHERE "id" = ${message.id}::uuid AND "status" = 'PENDING' AND "attempts" = ${message.attempts}`;
      if (marked !== 1) return false;
      await applyPaymentOutcome(tx, orderId, charge.status === ChargeStatus.SUCCEEDED ? "PAID" : "PAYMENT_FAILED", charge.id);
      return true;
    });
  }

  /** Retry later, or, past the bound, dead-letter the row and tell the order its payment failed. */
  async function recordFailure(message: ClaimedMessage, orderId: string | null, error: unknown): Promise<"retried" | "dead" | "fenced"> {
    const lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    if (message.attempts >= config.maxAttempts) {
      return db.$transaction(async (tx) => {
        const marked = await tx.$executeRaw`
          UPDATE "OutboxMessage" SET "status" = 'DEAD', "lastError" = ${lastError}, "lockedUntil" = NULL, "updatedAt" = ${now()}
          WHERE "id" = ${message.id}::uuid AND "status" = 'PENDING' AND "attempts" = ${message.attempts}`;
        if (marked !== 1) return "fenced";
        if (orderId) await applyPaymentOutcome(tx, orderId, "PAYMENT_FAILED", null);
        return "dead";
      });
    }
    const marked = await db.$executeRaw`
      UPDATE "OutboxMessage"
      SET "nextAttemptAt" = ${after(backoffMs(message.attempts, config, random))}, "lockedUntil" = NULL,
          "lastError" = ${lastError}, "updatedAt" = ${now()}
      WHERE "id" = ${message.id}::uuid AND "status" = 'PENDING' AND "attempts" = ${message.attempts}`;
    return marked === 1 ? "retried" : "fenced";
  }

  async function deliver(message: ClaimedMessage): Promise<keyof Omit<OutboxRunResult, "claimed">> {
    const payload = paymentPayload.safeParse(message.payload);
    if (!payload.success) {
      // A row nobody can deliver: retrying cannot fix it, so it goes straight to the dead letters.
      const dead = await recordFailure({ ...message, attempts: Math.max(message.attempts, config.maxAttempts) }, null, new Error("malformed payment payload"));
      return dead === "dead" ? "dead" : "fenced";
    }
    const { orderId, amountCents, currency } = payload.data;
    let charge: Charge;
    try {
      charge = await options.provider.charge({ idempotencyKey: message.idempotencyKey, reference: orderId, amountCents, currency });
    } catch (error) {
      options.log?.(`[outbox] ${message.id} attempt ${message.attempts}: ${(error as Error).message}`);
      return recordFailure(message, orderId, error);
    }
    await options.hooks?.afterCharge?.(message, charge);
    return (await recordDelivery(message, orderId, charge)) ? "delivered" : "fenced";
  }

  return {
    config,
    /** One round: claim a batch and deliver it. Returns what happened, for tests and the loop. */
    async runOnce(): Promise<OutboxRunResult> {
      const messages = await claim();
      const result: OutboxRunResult = { claimed: messages.length, delivered: 0, retried: 0, dead: 0, fenced: 0 };
      for (const message of messages) result[await deliver(message)]++;
      return result;
    },
  };
}
export type OutboxWorker = ReturnType<typeof createOutboxWorker>;
