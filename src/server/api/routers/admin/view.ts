// Rows as the dashboard sees them: whitelisted fields, dates as ISO strings.
import type { KeyDetailRow, KeyListRow } from "./key-queries";
import type { AuditEntry } from "@/generated/prisma/client";
import { iso } from "./cursor";
import type { AuditView, KeyDetail, KeySummary } from "./keys.types";

export function keySummary(r: KeyListRow): KeySummary {
  return {
    id: r.id,
    tenant: r.scope,
    key: r.key,
    procedure: r.procedure,
    status: r.status,
    attempts: r.attempts,
    leaseState: r.leaseState,
    leaseExpiresAt: iso(r.leaseExpiresAt),
    createdAt: r.createdAt.toISOString(),
    completedAt: iso(r.completedAt),
    expiresAt: r.expiresAt.toISOString(),
    responseStatus: r.responseStatus,
  };
}

export function keyDetail(r: KeyDetailRow): KeyDetail {
  return {
    ...keySummary(r),
    fingerprint: r.fingerprint,
    leaseToken: r.leaseToken,
    responseBody: r.responseBody,
    responseContentType: r.responseContentType,
    updatedAt: r.updatedAt.toISOString(),
    dbNow: r.dbNow.toISOString(),
  };
}

export function auditView(a: AuditEntry): AuditView {
  return {
    id: a.id,
    actor: a.actor,
    action: a.action,
    targetType: a.targetType,
    targetId: a.targetId,
    reason: a.reason,
    details: a.details ?? null,
    createdAt: a.createdAt.toISOString(),
  };
}

/** The audit log's target type for idempotency keys (targetId is the key row's id). */
export const KEY_TARGET = "IdempotencyKey";
export const OUTBOX_TARGET = "OutboxMessage";
