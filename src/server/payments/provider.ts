// A simulated payment provider with its own books (ProviderCharge, ProviderIdempotencyRecord,
// ProviderEvent), behaving like a real one where it matters: it charges once per idempotency key
// and returns the first charge on a repeat, it fails transiently now and then, it can time out
// after charging (the caller never learns of a charge that happened), and it reports charges as
// events that are delivered to our webhook, sometimes twice.
import { randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { DECLINE_ABOVE_CENTS } from "./config";

export const ChargeStatus = { SUCCEEDED: "SUCCEEDED", FAILED: "FAILED" } as const;
export type ChargeStatus = (typeof ChargeStatus)[keyof typeof ChargeStatus];

export const EventType = { SUCCEEDED: "charge.succeeded", FAILED: "charge.failed" } as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export interface ChargeRequest {
  /** The merchant's idempotency key: a repeat returns the first charge. */
  idempotencyKey: string;
  /** The merchant's order id. */
  reference: string;
  amountCents: number;
  currency: string;
}

export interface Charge {
  id: string;
  status: ChargeStatus;
  reference: string;
  amountCents: number;
  currency: string;
  /** True when the key had been seen: this is the first call's charge. */
  replayed: boolean;
}

/** What the outbox worker needs from a provider. */
export interface PaymentProvider {
  charge(request: ChargeRequest): Promise<Charge>;
}

/** Transient: the provider could not be reached. Nothing was charged; retry with the same key. */
export class ProviderUnavailableError extends Error {
  constructor() {
    super("payment provider unavailable (simulated)");
    this.name = "ProviderUnavailableError";
  }
}

/** Transient and the hard case: the charge may exist. Retry with the same key to learn it. */
export class ProviderTimeoutError extends Error {
  constructor() {
    super("payment provider timed out (simulated, after charging)");
    this.name = "ProviderTimeoutError";
  }
}

export interface SimulatedProviderOptions {
  /** Share of calls that fail before charging. */
  failureRate?: number;
  /** Share of calls that charge (or find the earlier charge) and then time out. */
  timeoutAfterChargeRate?: number;
  declineAboveCents?: number;
  random?: () => number;
}

export const newProviderId = (prefix: "ch" | "evt") => `${prefix}_${randomBytes(12).toString("hex")}`;

export class SimulatedProvider implements PaymentProvider {
  private readonly random: () => number;
  constructor(
    private readonly db: Db,
    private readonly options: SimulatedProviderOptions = {},
  ) {
    this.random = options.random ?? Math.random;
  }

  async charge(request: ChargeRequest): Promise<Charge> {
    if (this.random() < (this.options.failureRate ?? 0)) throw new ProviderUnavailableError();
    const charge = await this.db.$transaction(async (tx) => {
      const chargeId = newProviderId("ch");
      // The key's record decides every race, without failing on conflict: a concurrent call with
      // the same key waits for the first to commit, then inserts nothing and reads its charge.
      const claimed = await tx.$queryRaw<{ chargeId: string }[]>`
        INSERT INTO "ProviderIdempotencyRecord" ("key", "chargeId") VALUES (${request.idempotencyKey}, ${chargeId})
        ON CONFLICT ("key") DO NOTHING RETURNING "chargeId"`;
      if (!claimed[0]) {
        const record = await tx.providerIdempotencyRecord.findUniqueOrThrow({ where: { key: request.idempotencyKey } });
        const first = await tx.providerCharge.findUniqueOrThrow({ where: { id: record.chargeId } });
        return { ...toCharge(first), replayed: true };
      }
      const status = request.amountCents > (this.options.declineAboveCents ?? DECLINE_ABOVE_CENTS) ? ChargeStatus.FAILED : ChargeStatus.SUCCEEDED;
      const created = await tx.providerCharge.create({
        data: {
          id: chargeId,
          idempotencyKey: request.idempotencyKey,
          reference: request.reference,
          amountCents: request.amountCents,
          currency: request.currency,
          status,
        },
      });
      const charge = { ...toCharge(created), replayed: false };
      await tx.providerEvent.create({
        data: {
          id: newProviderId("evt"),
          type: status === ChargeStatus.SUCCEEDED ? EventType.SUCCEEDED : EventType.FAILED,
          chargeId,
          payload: eventData(charge),
        },
      });
      return charge;
    });
    if (this.random() < (this.options.timeoutAfterChargeRate ?? 0)) throw new ProviderTimeoutError();
    return charge;
  }
}

function toCharge(row: { id: string; status: ChargeStatus; reference: string; amountCents: number; currency: string }) {
  return { id: row.id, status: row.status, reference: row.reference, amountCents: row.amountCents, currency: row.currency };
}

/** The event's `data`, as the webhook receives it. */
export function eventData(charge: Omit<Charge, "replayed">) {
  return { chargeId: charge.id, status: charge.status, reference: charge.reference, amountCents: charge.amountCents, currency: charge.currency };
}
