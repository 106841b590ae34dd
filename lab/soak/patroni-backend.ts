// The patroni profiles' data: a three-node Patroni cluster (synchronous_mode, or not for the
// demonstration) behind HAProxy that follows the primary, the shop's database on it, and the
// provider service's books on a server of their own outside the cluster (as a real provider's
// are), so the checker sees what was really charged whatever a failover does to the shop's data.
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../tools/db/embedded";
import type { SoakBackend } from "./backend";
import { Profile, type SoakConfig } from "./config";
import { DATABASE, PROVIDER_DATABASE, prepareSoakDatabase } from "./database";
import { runFailovers } from "./failover";
import { serversUp, startPrimaryProxy, waitForPort } from "./haproxy";
import { PatroniCluster, SUPERUSER } from "./patroni";
import { waitFor } from "../../tools/process";
import { onCleanup, stopChild } from "./processes";

type Log = (m: string) => void;
type Ports = () => Promise<number>;

export async function startPatroniBackend(
  profile: Profile,
  config: SoakConfig,
  dir: string,
  port: Ports,
  log: Log,
): Promise<SoakBackend> {
  const synchronous = profile === Profile.PATRONI;
  const { cluster, nodes, forgetCluster } = await startCluster(synchronous, config, dir, port, log);
  const { proxy, url } = await startShopDatabase(nodes, dir, port, log);
  const { providerServer, forgetProvider } = await startProviderBooks(dir, port, log);
  return {
    appUrl: url(DATABASE),
    directUrl: url(DATABASE),
    providerDatabaseUrl: providerServer.url(PROVIDER_DATABASE),
    throughPooler: false,
    separateWorker: true,
    faults: (c, rec) => runFailovers({ ...c, stallThenLosePrimary: !synchronous }, rec, cluster),
    async stop() {
      await stopChild(proxy);
      await cluster.stop();
      forgetCluster();
      await providerServer.stop();
      forgetProvider();
    },
  };
}

/** Three Patroni nodes and their etcd, up, with the cleanup hook that stops them on an abort. */
async function startCluster(
  synchronous: boolean,
  config: SoakConfig,
  dir: string,
  port: Ports,
  log: Log,
) {
  const nodes = [];
  for (let i = 0; i < 3; i++) nodes.push({ pg: await port(), rest: await port() });
  const cluster = new PatroniCluster({
    dir,
    etcdPort: await port(),
    etcdPeerPort: await port(),
    nodes,
    synchronous,
    ttlSeconds: config.patroniTtlSeconds,
  });
  const forgetCluster = onCleanup(() => cluster.stop());
  await cluster.start();
  log(
    `Patroni cluster up (${synchronous ? "synchronous_mode" : "asynchronous"}): ${(await cluster.members()).map((m) => `${m.name} ${m.role} on ${m.port}`).join(", ")}`,
  );
  return { cluster, nodes, forgetCluster };
}

/**
 * HAProxy in front of the cluster, sending to the primary only (Patroni's /primary check), and
 * the shop's database created and prepared through it.
 */
async function startShopDatabase(
  nodes: { pg: number; rest: number }[],
  dir: string,
  port: Ports,
  log: Log,
) {
  const proxyPort = await port();
  const proxy = startPrimaryProxy({ port: proxyPort, nodes, dir });
  await waitForPort("haproxy (postgres)", proxyPort, 10_000, proxy);
  await waitFor(
    "haproxy sending to the primary only",
    async () => (await serversUp({ dir })).length === 1,
    10_000,
    proxy,
  );
  const url = (database: string) =>
    `postgresql://${SUPERUSER.username}:${SUPERUSER.password}@127.0.0.1:${proxyPort}/${database}`;
  await createDatabase(url("postgres"), DATABASE);
  await prepareSoakDatabase(url(DATABASE));
  log(
    `HAProxy for the primary (Patroni's /primary check) on ${proxyPort}; database "${DATABASE}" ready`,
  );
  return { proxy, url };
}

/**
 * The provider's books on a PostgreSQL of their own, outside the cluster: no failover reaches
 * them.
 */
async function startProviderBooks(dir: string, port: Ports, log: Log) {
  const providerServer = await startEmbeddedPostgres({
    dataDir: path.join(dir, "provider-pg"),
    port: await port(),
    persistent: true,
  });
  const forgetProvider = onCleanup(() => providerServer.stop());
  await providerServer.createDatabase(PROVIDER_DATABASE);
  log(`the provider's books on their own PostgreSQL, port ${providerServer.port}`);
  return { providerServer, forgetProvider };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
