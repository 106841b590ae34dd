// A dead letter whose order was paid after all: the worker gave up on a payment (the provider kept
// timing out after charging, say), and then the provider's webhook reported the charge, or the
// charge came through another way. The money is taken and the order says PAID, so the row no
// longer needs an operator: reconciliation closes it (DEAD → DELIVERED, with the order's charge),
// and writes who closed it and why to the audit log, in the same statement.
import type { Db } from "./db";
import { PAYMENT_TOPIC } from "./outbox-message";

/** Who the audit log names for what reconciliation does on its own. */
export const RECONCILIATION_ACTOR = "reconciliation";

export interface ClosedDeadLetter {
  id: string;
  orderId: string;
  chargeId: string | null;
}

/**
 * One statement: the UPDATE re-checks DEAD on the row it locks, so a message an operator is sending
 * back to the worker (DEAD → PENDING) at the same moment is left to the worker.
 */
export async function closePaidDeadLetters(db: Db): Promise<ClosedDeadLetter[]> {
  return db.$queryRaw<ClosedDeadLetter[]>`
    WITH closed AS (
      UPDATE "OutboxMessage" AS m
      SET "status" = 'DELIVERED', "deliveredAt" = now(), "lockedUntil" = NULL, "updatedAt" = now(),
          "result" = jsonb_build_object('chargeId', o."chargeId", 'status', 'SUCCEEDED', 'closedBy', ${RECONCILIATION_ACTOR}::text)
      FROM "Order" AS o
      WHERE m."status" = 'DEAD' AND m."topic" = ${PAYMENT_TOPIC} AND o."id"::text = m."aggregateId" AND o."status" = 'PAID'
      RETURNING m."id", m."aggregateId", o."chargeId"
    ), audited AS (
      INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "reason", "details")
      SELECT ${RECONCILIATION_ACTOR}, 'outbox.close', 'OutboxMessage', "id"::text, 'the order was paid after all',
             jsonb_build_object('orderId', "aggregateId", 'chargeId', "chargeId")
      FROM closed
    )
    SELECT "id"::text AS "id", "aggregateId" AS "orderId", "chargeId" FROM closed`;
}
