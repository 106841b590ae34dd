// Every action the audit log records, in one table shared by the server, which writes them, and the
// dashboard, whose audit log filters by them: an action added here is offered by the filter at
// once. audit-actions.test.ts fails on an audit entry written with an action not named here.
export const AuditAction = {
  /** An operator removed a finished key (its answer with it): the next request runs again. */
  KEY_BUST: "key.bust",
  /** An operator (one key, or stuck leases in bulk) freed a stuck lease. */
  KEY_RELEASE: "key.release",
  /** An operator sent a dead-lettered outbox message again. */
  OUTBOX_RETRY: "outbox.retry",
  /** Reconciliation closed a dead letter whose order was paid after all. */
  OUTBOX_CLOSE: "outbox.close",
  /** An operator ended one session. */
  SESSION_END: "session.end",
  /** An operator ended every session of an account. */
  SESSION_END_ALL: "session.end_all",
  /** An operator resolved a reconciliation finding, with a note saying what was done. */
  RECONCILIATION_RESOLVE: "reconciliation.resolve",
  /** Reconciliation closed a finding whose disagreement is gone. */
  RECONCILIATION_CLOSE: "reconciliation.close",
  /** Reconciliation opened again a resolved finding: the disagreement is back. */
  RECONCILIATION_REOPEN: "reconciliation.reopen",
} as const;
export type AuditAction = (typeof AuditAction)[keyof typeof AuditAction];

export const AUDIT_ACTIONS: readonly AuditAction[] = Object.values(AuditAction);
