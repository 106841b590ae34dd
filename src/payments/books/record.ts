// A judgement written down: the findings it found recorded (once: dedupeKey is unique), the ones
// that had been resolved opened again, and the open findings about the subjects it judged whole
// that it no longer finds closed: the disagreement is gone. Opening again and closing are audited
// (actor "reconciliation"); every change is said in one log line (finding-log.ts). One transaction
// per judgement (a page of charges, a chunk of orders).
import type { Db, Tx } from "../db";
import { AuditAction } from "@/shared/audit-actions";
import { RECONCILIATION_ACTOR } from "../dead-letters";
import { FINDING_TARGET } from "../finding-resolution";
import type { Finding } from "./finding";
import { logFinding, type FindingLogger } from "./finding-log";

/** What a judgement covered: its findings, and every subject it judged whole. */
export interface Judgement {
  findings: readonly Finding[];
  subjects: readonly string[];
}

export interface Written {
  recorded: number;
  reopened: number;
  closed: number;
}

/** The resolution note and audit reason of a finding reconciliation closes. */
export const CLOSED_NOTE = "closed by reconciliation: the disagreement is gone";

export async function writeJudgement(
  db: Db,
  judgement: Judgement,
  log?: FindingLogger,
): Promise<Written> {
  const unique = [...new Map(judgement.findings.map((f) => [f.dedupeKey, f])).values()];
  if (unique.length === 0 && judgement.subjects.length === 0)
    return { recorded: 0, reopened: 0, closed: 0 };
  // Nothing found (most pages): one statement, no transaction around it.
  const written =
    unique.length === 0
      ? { recorded: [], reopened: [], closed: await close(db, judgement.subjects, unique) }
      : await db.$transaction(async (tx) => ({
          recorded: await record(tx, unique),
          reopened: await reopen(tx, unique),
          closed: await close(tx, judgement.subjects, unique),
        }));
  for (const f of written.recorded) logFinding(f, "new", "reconciliation", log);
  for (const f of written.reopened) logFinding(f, "reopened", "reconciliation", log);
  for (const f of written.closed) logFinding(f, "closed", "reconciliation", log);
  return {
    recorded: written.recorded.length,
    reopened: written.reopened.length,
    closed: written.closed.length,
  };
}

async function record(tx: Tx, findings: readonly Finding[]): Promise<Finding[]> {
  if (findings.length === 0) return [];
  const created = await tx.reconciliationFinding.createManyAndReturn({
    data: findings.map((f) => ({ ...f, details: f.details as object })),
    skipDuplicates: true,
    select: { dedupeKey: true },
  });
  const keys = new Set(created.map((f) => f.dedupeKey));
  return findings.filter((f) => keys.has(f.dedupeKey));
}

/** Resolved, and found again: the disagreement is back (counted again by timesFound). */
async function reopen(tx: Tx, findings: readonly Finding[]): Promise<Finding[]> {
  if (findings.length === 0) return [];
  const opened = await tx.reconciliationFinding.updateManyAndReturn({
    where: { dedupeKey: { in: findings.map((f) => f.dedupeKey) }, resolvedAt: { not: null } },
    data: { resolvedAt: null, resolution: null, resolvedBy: null, timesFound: { increment: 1 } },
    select: { id: true, dedupeKey: true },
  });
  if (opened.length === 0) return [];
  await tx.auditEntry.createMany({
    data: opened.map((f) => ({
      actor: RECONCILIATION_ACTOR,
      action: AuditAction.RECONCILIATION_REOPEN,
      targetType: FINDING_TARGET,
      targetId: f.id,
      reason: "found again by reconciliation",
      details: { dedupeKey: f.dedupeKey },
    })),
  });
  const keys = new Set(opened.map((f) => f.dedupeKey));
  return findings.filter((f) => keys.has(f.dedupeKey));
}

/** The open findings about `subjects` that the judgement did not find: closed, and audited. */
async function close(tx: Tx | Db, subjects: readonly string[], found: readonly Finding[]) {
  if (subjects.length === 0) return [];
  return tx.$queryRaw<Finding[]>`
    WITH gone AS (
      UPDATE "ReconciliationFinding"
      SET "resolvedAt" = now(), "resolvedBy" = ${RECONCILIATION_ACTOR}, "resolution" = ${CLOSED_NOTE}
      WHERE "resolvedAt" IS NULL AND "subject" = ANY(${subjects}::text[])
        AND NOT ("dedupeKey" = ANY(${found.map((f) => f.dedupeKey)}::text[]))
      RETURNING "id", "kind"::text AS "kind", "dedupeKey", "subject", "orderId", "chargeIds", "details", "createdAt"
    ), audited AS (
      INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "reason", "details")
      SELECT ${RECONCILIATION_ACTOR}::text, ${AuditAction.RECONCILIATION_CLOSE}::text, ${FINDING_TARGET}::text, g."id"::text, ${CLOSED_NOTE}::text,
             jsonb_build_object('kind', g."kind", 'orderId', g."orderId", 'chargeIds', g."chargeIds", 'foundAt', g."createdAt")
      FROM gone AS g
    )
    SELECT "kind", "dedupeKey", "subject", "orderId", "chargeIds", "details" FROM gone`;
}
