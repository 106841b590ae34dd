// Are the key store's commits synchronously replicated? An answer of 200 is a promise that the
// order exists; it survives the loss of the primary only if a standby had the commit before the
// answer left (docs/design.md, "Across a failover"). Read from the server the app writes to: the
// settings (synchronous_standby_names, synchronous_commit) and the standbys streaming from it now
// (pg_stat_replication's sync_state; its columns need superuser or the pg_monitor role). Shown at
// start-up (one log line), in /api/metrics (a gauge) and on the dashboard.

/** What the server says. */
export interface ReplicationFacts {
  /** on, remote_write, remote_apply wait for a named standby; off and local never. */
  synchronousCommit: string;
  /** synchronous_standby_names: empty means asynchronous replication (or none). */
  standbyNames: string;
  /** The standbys streaming from this server now (sync_state: sync, quorum, potential, async). */
  standbys: { name: string; syncState: string | null }[];
}

export const ReplicationMode = {
  /** A commit returns once a standby has it. */
  SYNCHRONOUS: "synchronous",
  /** Standbys stream, but commits do not wait: a failover can lose commits answered 200. */
  ASYNCHRONOUS: "asynchronous",
  /** A synchronous standby is named but none is connected: commits wait (or fall back). */
  STANDBY_MISSING: "standby_missing",
  /** No standby at all (a development database): one disk holds everything. */
  STANDALONE: "standalone",
} as const;
export type ReplicationMode = (typeof ReplicationMode)[keyof typeof ReplicationMode];

export interface ReplicationStatus extends ReplicationFacts {
  mode: ReplicationMode;
  /** One sentence for the operator when commits are not synchronously replicated, else null. */
  warning: string | null;
  /**
   * Whether the dashboard shows it as a fault: a standby missing or replication asynchronous, where
   * a failover can lose answered orders. A standalone server (a developer's machine, the embedded
   * PostgreSQL) has no failover to lose them to: its note is said, neutral, not raised as an alarm.
   */
  alarm: boolean;
}

const WAITS_FOR_STANDBY = new Set(["on", "remote_write", "remote_apply"]);

export function describeReplication(facts: ReplicationFacts): ReplicationStatus {
  const named = facts.standbyNames.trim() !== "";
  const waits = named && WAITS_FOR_STANDBY.has(facts.synchronousCommit);
  const { SYNCHRONOUS, STANDBY_MISSING, STANDALONE, ASYNCHRONOUS } = ReplicationMode;
  const status = (mode: ReplicationMode, warning: string | null) => {
    const alarm = mode === STANDBY_MISSING || mode === ASYNCHRONOUS;
    return { ...facts, mode, warning, alarm };
  };
  if (waits && confirmingStandbys(facts).length > 0) return status(SYNCHRONOUS, null);
  if (waits)
    return status(
      STANDBY_MISSING,
      `synchronous_standby_names is "${facts.standbyNames}" but no synchronous standby is connected: commits wait for one, or the failover manager falls back to asynchronous replication.`,
    );
  if (facts.standbys.length === 0)
    return status(
      STANDALONE,
      "No standby streams from this database: every answer is as durable as this one server's disk.",
    );
  const why = named
    ? `synchronous_commit is ${facts.synchronousCommit}`
    : "synchronous_standby_names is empty";
  return status(
    ASYNCHRONOUS,
    `Replication is asynchronous (${why}): a failover can lose orders that were already answered 200. Turn on synchronous replication (Patroni: synchronous_mode).`,
  );
}

/** The standbys whose confirmation a commit waits for now. */
export const confirmingStandbys = (facts: ReplicationFacts) =>
  facts.standbys
    .filter((s) => s.syncState === "sync" || s.syncState === "quorum")
    .map((s) => s.name);

/** What it needs of a client: one raw query (Prisma's client or a transaction). */
type RawQuery = { $queryRawUnsafe<T = unknown>(query: string): Promise<T> };

export async function readReplicationStatus(db: RawQuery): Promise<ReplicationStatus> {
  const [settings] = await db.$queryRawUnsafe<
    { synchronousCommit: string; standbyNames: string }[]
  >(
    `SELECT current_setting('synchronous_commit') AS "synchronousCommit", current_setting('synchronous_standby_names') AS "standbyNames"`,
  );
  const standbys = await db.$queryRawUnsafe<{ name: string; syncState: string | null }[]>(
    `SELECT application_name AS "name", sync_state AS "syncState" FROM pg_stat_replication`,
  );
  return describeReplication({
    synchronousCommit: settings?.synchronousCommit ?? "on",
    standbyNames: settings?.standbyNames ?? "",
    standbys,
  });
}

/** The start-up line: info when synchronous, else a warning; an unreachable database is said. */
export async function logReplicationAtStart(
  db: RawQuery,
  log: { info: (m: string) => void; warn: (m: string) => void },
): Promise<void> {
  try {
    const status = await readReplicationStatus(db);
    const standbys = confirmingStandbys(status).join(", ");
    if (status.warning) log.warn(`[replication] ${status.mode}: ${status.warning}`);
    else log.info(`[replication] synchronous: commits wait for ${standbys}`);
  } catch (error) {
    log.warn(
      `[replication] could not be read at start (${(error as Error).message}); see /api/metrics once the database answers`,
    );
  }
}
