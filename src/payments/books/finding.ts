// What reconciliation (and the webhook and the worker, when they refuse a charge) records about
// books that do not agree: a finding's kind, the ids involved, and its subject, the one record the
// finding is about (a charge, an order, or a checkout intent). Each record is judged whole, so a
// finding about a subject that a later judgement of it no longer finds is gone, and is closed.
export const FindingKind = {
  DUPLICATE_CHARGE: "DUPLICATE_CHARGE",
  CHARGE_WITHOUT_ORDER: "CHARGE_WITHOUT_ORDER",
  PAID_ORDER_WITHOUT_CHARGE: "PAID_ORDER_WITHOUT_CHARGE",
  AMOUNT_MISMATCH: "AMOUNT_MISMATCH",
  SHARED_INTENT: "SHARED_INTENT",
} as const;
export type FindingKind = (typeof FindingKind)[keyof typeof FindingKind];

export interface Finding {
  kind: FindingKind;
  /** The kind plus the ids involved: one disagreement judged twice is recorded once. */
  dedupeKey: string;
  /** What it is about (chargeSubject, orderSubject, intentSubject). */
  subject: string;
  orderId: string | null;
  chargeIds: string[];
  details: Record<string, unknown>;
}

export const keyOf = (kind: FindingKind, ...ids: string[]) => `${kind}:${ids.join(",")}`;

/** A finding about `subject`, keyed by its kind and `keyIds`. */
export const finding = (
  kind: FindingKind,
  [subject, ...keyIds]: string[],
  orderId: string | null,
  chargeIds: string[],
  details: Record<string, unknown>,
): Finding => ({
  kind,
  dedupeKey: keyOf(kind, ...keyIds),
  subject: subject!,
  orderId,
  chargeIds,
  details,
});

export const chargeSubject = (chargeId: string) => `charge:${chargeId}`;
export const orderSubject = (orderId: string) => `order:${orderId}`;
export const intentSubject = (tenantId: string, checkoutKey: string) =>
  `intent:${encodeURIComponent(tenantId)}:${checkoutKey}`;
