// Rows as the dashboard sees them: whitelisted fields, dates as ISO strings. Their types are what
// the dashboard's components import.
import type { KeyDetailRow, KeyListRow } from "@/server/admin/keys-query";
import type { AuditEntry, Prisma } from "@/generated/prisma/client";
import type { Tx } from "@/server/db/client";
import type { AuditAction } from "@/shared/audit-actions";
import { iso } from "./cursor";

export function keySummary(r: KeyListRow) {
  return {
    id: r.id,
    tenant: r.scope,
    key: r.key,
    procedure: r.procedure,
    status: r.status,
    attempts: r.attempts,
    leaseState: r.leaseState,
    leaseExpiresAt: iso(r.leaseExpiresAt),
    /** Lease end − the database's clock when read, in ms; negative: expired that long ago. */
    leaseRemainingMs: r.leaseRemainingMs === null ? null : Math.round(r.leaseRemainingMs),
    createdAt: r.createdAt.toISOString(),
    completedAt: iso(r.completedAt),
    expiresAt: r.expiresAt.toISOString(),
    responseStatus: r.responseStatus,
  };
}
export type KeySummary = ReturnType<typeof keySummary>;

export function keyDetail(r: KeyDetailRow) {
  return {
    ...keySummary(r),
    fingerprint: r.fingerprint,
    leaseToken: r.leaseToken,
    /** The stored answer's exact text, as sent. */
    responseBody: r.responseBody ?? null,
    responseContentType: r.responseContentType,
    updatedAt: r.updatedAt.toISOString(),
    /** The database's clock when read: the lease state is judged against it. */
    dbNow: r.dbNow.toISOString(),
  };
}
export type KeyDetail = ReturnType<typeof keyDetail>;

export function auditView(a: AuditEntry) {
  return {
    id: a.id,
    actor: a.actor,
    action: a.action,
    targetType: a.targetType,
    targetId: a.targetId,
    /** For a key: its tenant and value (the row id alone dies with a bust). */
    targetScope: a.targetScope,
    targetKey: a.targetKey,
    reason: a.reason,
    details: a.details ?? null,
    createdAt: a.createdAt.toISOString(),
  };
}
export type AuditView = ReturnType<typeof auditView>;

/** The audit log's target type for idempotency keys (targetId is the key row's id). */
export const KEY_TARGET = "IdempotencyKey";
export const OUTBOX_TARGET = "OutboxMessage";

/** Writes one audit entry in the action's transaction; returns its id. */
export async function writeAudit(
  tx: Tx,
  data: Omit<Prisma.AuditEntryUncheckedCreateInput, "details" | "action"> & {
    details: unknown;
    action: AuditAction;
  },
): Promise<string> {
  const details = JSON.parse(JSON.stringify(data.details)) as Prisma.InputJsonValue;
  return (await tx.auditEntry.create({ data: { ...data, details }, select: { id: true } })).id;
}
