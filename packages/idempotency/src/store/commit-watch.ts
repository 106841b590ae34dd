// Was a commit confirmed by the synchronous standby? When a commit's wait for synchronous
// replication is cancelled (pg_cancel_backend, a statement timeout), PostgreSQL does not fail the
// COMMIT: it returns success with a WARNING, "canceling wait for synchronous replication due to
// user request", DETAIL "The transaction has already committed locally, but might not have been
// replicated to the standby." The row is visible on the primary and may be missing on the standby
// that a failover promotes. An answer built on that commit must not be given as final: the engine
// answers 503 (commit_unconfirmed) and the retry reads the key again.
//
// The warning arrives on the connection as a notice, before the COMMIT's completion, so it has
// been seen by the time the transaction's promise resolves. The transaction's backend pid links
// the two: the completion statement returns it, and each pool connection files its notices under
// its own backend pid. Needs connections to PostgreSQL's own sessions (direct, or a pooler in
// session mode): behind a transaction-mode pooler the pids do not match and nothing is detected.
// Matched on the English text: the server's lc_messages must be English (C or en_*).
import type pg from "pg";

const CANCELLED_WAIT = /canceling (the )?wait for synchronous replication/i;

export function isUnconfirmedCommitNotice(notice: { message?: string; detail?: string }): boolean {
  return (
    CANCELLED_WAIT.test(notice.message ?? "") ||
    /committed locally, but might not have been replicated/i.test(notice.detail ?? "")
  );
}

export class CommitWatch {
  /** Backend pids that received the warning since they were last armed. */
  private readonly unconfirmed = new Set<number>();

  /**
   * Listens on every connection `pool` opens from now on (connections opened before are not
   * watched).
   */
  constructor(pool: pg.Pool) {
    pool.on("connect", (client) => {
      client.on("notice", (notice) => {
        const pid = (client as unknown as { processID?: number }).processID;
        if (pid !== undefined && isUnconfirmedCommitNotice(notice)) this.unconfirmed.add(pid);
      });
    });
  }

  /** Called inside the transaction, before its COMMIT: forget an older warning of this backend. */
  arm(pid: number): void {
    this.unconfirmed.delete(pid);
  }

  /** Called after the COMMIT returned: true if its wait for the standby was cancelled. */
  take(pid: number): boolean {
    return this.unconfirmed.delete(pid);
  }
}
