// A reconciliation finding carried to its end: an operator says what was done about it (refunded
// the second charge, restored the order...) and it leaves the open findings, with the note, the
// operator's name and an audit entry, in one transaction. Found again by a later run, it opens
// again (books/record.ts, writeJudgement): resolving a disagreement that is still there does not
// hide it.
import type { Tx } from "./db";

/** The audit log's target type for a finding. */
export const FINDING_TARGET = "ReconciliationFinding";
export const RESOLVE_ACTION = "reconciliation.resolve";

export type ResolveOutcome =
  | { status: "resolved"; id: string; resolvedAt: Date; auditId: string }
  | { status: "already-resolved"; id: string; resolvedAt: Date; resolvedBy: string | null }
  | { status: "not-found" };

export async function resolveFinding(
  tx: Tx,
  input: { id: string; note: string; actor: string },
): Promise<ResolveOutcome> {
  // The WHERE re-checks "open" on the row it locks: two operators at once resolve it once.
  const resolved = await tx.reconciliationFinding.updateMany({
    where: { id: input.id, resolvedAt: null },
    data: { resolvedAt: new Date(), resolution: input.note, resolvedBy: input.actor },
  });
  const finding = await tx.reconciliationFinding.findUnique({ where: { id: input.id } });
  if (!finding) return { status: "not-found" };
  if (resolved.count === 0)
    return {
      status: "already-resolved",
      id: finding.id,
      resolvedAt: finding.resolvedAt!,
      resolvedBy: finding.resolvedBy,
    };
  const audit = await tx.auditEntry.create({
    data: {
      actor: input.actor,
      action: RESOLVE_ACTION,
      targetType: FINDING_TARGET,
      targetId: finding.id,
      reason: input.note,
      details: {
        kind: finding.kind,
        orderId: finding.orderId,
        chargeIds: finding.chargeIds,
        foundAt: finding.createdAt.toISOString(),
      },
    },
    select: { id: true },
  });
  return { status: "resolved", id: finding.id, resolvedAt: finding.resolvedAt!, auditId: audit.id };
}
