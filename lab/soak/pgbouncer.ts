// PgBouncer in transaction pooling mode between the instances and PostgreSQL: every transaction
// (and every statement outside one) may run on a different server connection, so nothing that
// lives in a session survives between them: session advisory locks, prepared statements, SET
// outside a transaction, LISTEN. The soak's PgBouncer profile sends the engine, the jobs and the
// worker through it; what must hold a session (LISTEN) gets DIRECT_DATABASE_URL instead.
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startChild, type Child } from "./processes";

export interface PgbouncerOptions {
  port: number;
  pgPort: number;
  database: string;
  user: string;
  password: string;
  dir: string;
}

export function pgbouncerConfig(o: PgbouncerOptions): string {
  return `;; Written by lab/soak/pgbouncer.ts for one soak run.
[databases]
${o.database} = host=127.0.0.1 port=${o.pgPort} dbname=${o.database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${o.port}
;; No unix socket: other PgBouncers on this machine may use the default one.
unix_socket_dir =
auth_type = plain
auth_file = ${path.join(o.dir, "userlist.txt")}
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
max_db_connections = 60
;; Fail closed within seconds when PostgreSQL is away, instead of queueing clients for 2 minutes:
;; the app then answers 503 with Retry-After.
query_wait_timeout = 5
server_connect_timeout = 2
;; Try PostgreSQL again one second after a failed login (default 15 s), so a restart heals fast.
server_login_retry = 1
ignore_startup_parameters = extra_float_digits,options
logfile = ${path.join(o.dir, "pgbouncer.log")}
pidfile = ${path.join(o.dir, "pgbouncer.pid")}
`;
}

/**
 * PgBouncer refuses to run as root; as root we hand it to the "postgres" user (-u), like
 * PostgreSQL.
 */
export function startPgbouncer(o: PgbouncerOptions): Child {
  const ini = path.join(o.dir, "pgbouncer.ini");
  writeFileSync(ini, pgbouncerConfig(o));
  writeFileSync(path.join(o.dir, "userlist.txt"), `"${o.user}" "${o.password}"\n`);
  chmodSync(o.dir, 0o777); // its log and pid file are written by the postgres user
  const args = process.getuid?.() === 0 ? ["-u", "postgres", ini] : [ini];
  return startChild("pgbouncer", "pgbouncer", args, {
    logFile: path.join(o.dir, "pgbouncer.stdout.log"),
  });
}
