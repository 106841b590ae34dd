// Where a profile's data lives, behind one interface so the run itself (clients, operator, drain,
// verdict) is the same for every profile: the app's embedded PostgreSQL, alone or behind PgBouncer,
// with its restart and outage faults (direct, pgbouncer), or a Patroni cluster with its failovers
// (patroni-backend.ts).
import path from "node:path";
import { freePort } from "../../tools/process";
import { Profile, type SoakConfig } from "./config";
import { DATABASE, PG_PASSWORD, PG_USER, startSoakDatabase } from "./database";
import { runFaults } from "./faults";
import { waitForPort } from "./haproxy";
import type { Instances } from "./instances";
import { startPgbouncer } from "./pgbouncer";
import { onCleanup, stopChild, type Child } from "./processes";
import type { Recorder } from "./record";

export interface SoakBackend {
  /** What the app's DATABASE_URL points at. */
  appUrl: string;
  /** PostgreSQL itself (for LISTEN, the facts, the drain): the primary, wherever it is. */
  directUrl: string;
  /**
   * The provider service's database: beside the shop's (direct, pgbouncer), or on a server of its
   * own outside the cluster (patroni).
   */
  providerDatabaseUrl: string;
  /**
   * DATABASE_URL goes through a transaction-mode pooler: no prepared statements, no session state.
   */
  throughPooler: boolean;
  /** The payment loops run in a process of their own (`npm run worker`), not in the instances. */
  separateWorker: boolean;
  faults(config: SoakConfig, rec: Recorder, instances: Instances): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Loopback ports: in a row from `base` when one is given (the patroni profiles), else any free
 * ones.
 */
export function portAllocator(base: number): () => Promise<number> {
  let next = base;
  return async () => (base > 0 ? next++ : freePort());
}

export async function startEmbeddedBackend(
  profile: Profile,
  dir: string,
  port: () => Promise<number>,
  log: (m: string) => void,
): Promise<SoakBackend> {
  const pgPort = await port();
  const db = await startSoakDatabase(path.join(dir, "pg"), pgPort);
  const forgetDb = onCleanup(() => db.stop());
  log(`PostgreSQL on ${pgPort}`);
  let appUrl = db.url;
  let bouncer: Child | undefined;
  if (profile === Profile.PGBOUNCER) {
    const bouncerPort = await port();
    bouncer = startPgbouncer({
      port: bouncerPort,
      pgPort,
      database: DATABASE,
      user: PG_USER,
      password: PG_PASSWORD,
      dir,
    });
    await waitForPort("pgbouncer", bouncerPort, 10_000, bouncer);
    appUrl = `postgresql://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${bouncerPort}/${DATABASE}`;
    log(`PgBouncer (transaction pooling) on ${bouncerPort}`);
  }
  return {
    appUrl,
    directUrl: db.url,
    providerDatabaseUrl: db.providerUrl,
    throughPooler: bouncer !== undefined,
    separateWorker: false,
    faults: (config, rec, instances) => runFaults(config, rec, instances, db),
    async stop() {
      if (bouncer) await stopChild(bouncer);
      await db.stop();
      forgetDb();
    },
  };
}
