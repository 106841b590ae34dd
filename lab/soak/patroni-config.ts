// Patroni's configuration for one node of the soak's cluster. The settings that decide what a
// failover does to once (synchronous_mode, master_start_timeout, use_pg_rewind) are explained in
// docs/operations.md.
import path from "node:path";

/** The cluster's ports and settings (lab/soak/patroni.ts starts it). */
export interface NodePorts {
  pg: number;
  rest: number;
}

export interface ClusterOptions {
  dir: string;
  etcdPort: number;
  etcdPeerPort: number;
  nodes: NodePorts[];
  /**
   * synchronous_mode: a commit returns once a standby has it (the patroni profile); off for the
   * demonstration.
   */
  synchronous: boolean;
  /** Patroni's leader key TTL: how long a lost node keeps the leadership (the node-loss outage). */
  ttlSeconds: number;
}

export const SCOPE = "once-soak";
export const SUPERUSER = { username: "postgres", password: "postgres" };
export const PG15_BIN = "/usr/lib/postgresql/15/bin";

/** Patroni's YAML, written as JSON (a subset of YAML). */
export function patroniConfig(o: ClusterOptions, i: number): Record<string, unknown> {
  const node = o.nodes[i]!;
  const home = path.join(o.dir, `pg${i + 1}`);
  return {
    scope: SCOPE,
    name: `pg${i + 1}`,
    restapi: { listen: `127.0.0.1:${node.rest}`, connect_address: `127.0.0.1:${node.rest}` },
    etcd: { host: `127.0.0.1:${o.etcdPort}` },
    bootstrap: {
      dcs: {
        // loop_wait + 2 × retry_timeout must not exceed the TTL (Patroni's rule).
        ttl: o.ttlSeconds,
        loop_wait: 1,
        retry_timeout: Math.floor((o.ttlSeconds - 1) / 2),
        // The demonstration's stalled standby is behind by more than the default 1 MB: without a
        // higher bound Patroni refuses to promote it, and there is no failover to lose data in.
        maximum_lag_on_failover: o.synchronous ? 1_048_576 : 1_073_741_824,
        synchronous_mode: o.synchronous,
        // 0: a primary whose postmaster died fails over at once, instead of being restarted in
        // place for up to 300 s.
        master_start_timeout: 0,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            wal_log_hints: "on",
            max_connections: 200,
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: "256MB",
            // The engine recognises the cancelled synchronous-replication wait by its English text.
            lc_messages: "C",
          },
        },
      },
      initdb: [{ encoding: "UTF8" }, { locale: "C.UTF-8" }],
      pg_hba: [
        "local all all trust",
        "host all all 127.0.0.1/32 md5",
        "host replication replicator 127.0.0.1/32 md5",
      ],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pg}`,
      connect_address: `127.0.0.1:${node.pg}`,
      data_dir: path.join(home, "data"),
      bin_dir: PG15_BIN,
      pgpass: path.join(home, "pgpass"),
      authentication: {
        superuser: SUPERUSER,
        replication: { username: "replicator", password: "replicator" },
      },
      parameters: { unix_socket_directories: home },
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}
