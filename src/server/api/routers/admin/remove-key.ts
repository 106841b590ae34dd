// admin.keys.bust and admin.keys.release: one rule book, two verbs (keys.ts).
import { adminIdempotentProcedure } from "../../trpc";
import {
  CounterEvent,
  KeyRemoval,
  type OperatorKeyRecord,
  type RemoveKeyResult,
} from "@once/idempotency/operator";
import type { Tx } from "@/server/db/client";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { removeKeyInput } from "./keys.types";
import { KEY_TARGET, writeAudit } from "./view";
import { AuditAction } from "@/shared/audit-actions";

export function removeKeyProcedure(mode: KeyRemoval) {
  return adminIdempotentProcedure(removeKeyInput).mutation(async ({ ctx, input }) => {
    const target = input.tenant ? { id: input.id, scope: input.tenant } : input.id;
    const result = await ctx.engine.removeKey(ctx.tx, target, mode);
    if (!result.removed) throw refusal(result);
    const r = result.record;
    const auditId = await audit(
      ctx.tx,
      { actor: ctx.principal.email, mode, reason: input.reason },
      r,
    );
    // Counted before the commit: if the admin request's own commit were fenced out the count is
    // one high, which a counter may be; the audit log is the exact record.
    ctx.engine.counters.increment(
      r.scope,
      r.procedure,
      mode === KeyRemoval.BUST ? CounterEvent.BUSTED : CounterEvent.RELEASED,
    );
    return {
      action: mode,
      key: { id: r.id, tenant: r.scope, key: r.key, procedure: r.procedure, status: r.status },
      auditId,
    };
  });
}

/**
 * Why the engine would not remove the key, as the admin's error: never a 409 or 422, which belong
 * to the engine, so a client tells "your admin request is still running" from "cannot be busted".
 */
function refusal(result: Extract<RemoveKeyResult, { removed: false }>): Error {
  switch (result.why) {
    case "not_found":
      return new AppError(
        Reason.KEY_NOT_FOUND,
        "No idempotency key with this id (already busted, released or reaped?)",
      );
    case "lease_live":
      return new AppError(
        Reason.KEY_LEASE_LIVE,
        `This key is PROCESSING and its lease is live until ${result.record.leaseExpiresAt?.toISOString() ?? "?"}: ` +
          "its request may still commit, so it cannot be removed. Wait for the lease to expire.",
      );
    case "not_stuck":
      return new AppError(
        Reason.KEY_NOT_STUCK,
        `This key is ${result.record.status}, not a stuck lease: there is nothing to release (bust it to let the next request run anew).`,
      );
    default: {
      const unreachable: never = result;
      return new Error(`unhandled refusal ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The removal's audit entry, holding what was stored, so the removed answer can still be found. */
function audit(
  tx: Tx,
  action: { actor: string; mode: KeyRemoval; reason: string },
  r: OperatorKeyRecord,
) {
  return writeAudit(tx, {
    actor: action.actor,
    action: action.mode === KeyRemoval.BUST ? AuditAction.KEY_BUST : AuditAction.KEY_RELEASE,
    targetType: KEY_TARGET,
    targetId: r.id,
    targetScope: r.scope,
    targetKey: r.key,
    reason: action.reason,
    details: {
      tenant: r.scope,
      key: r.key,
      procedure: r.procedure,
      status: r.status,
      leaseState: r.leaseState,
      fingerprint: r.fingerprint,
      attempts: r.attempts,
      responseStatus: r.responseStatus,
      responseBody: r.responseBody ?? null,
      createdAt: r.createdAt,
      completedAt: r.completedAt,
      leaseExpiresAt: r.leaseExpiresAt,
      expiresAt: r.expiresAt,
    },
  });
}
