// The patroni profiles' faults, under load, each one after the cluster has recovered from the one
// before: a planned switchover (patronictl, to the synchronous standby), the primary's postmaster
// SIGKILLed (Patroni fails over at once: master_start_timeout 0), a whole node lost (Patroni and
// every PostgreSQL process SIGKILLed, the machine gone) and brought back (it rejoins with
// pg_rewind), and a replication stall (the primary's WAL senders stopped with SIGSTOP: a standby
// that stops acknowledging). The asynchronous demonstration stalls and then loses the primary.
import { setTimeout as pause } from "node:timers/promises"; // a fault's own length, not a wait for anything
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import type { SoakConfig } from "./config";
import { PATRONICTL_BIN, SUPERUSER, type PatroniCluster } from "./patroni";
import { killPid } from "./processes";
import type { Recorder } from "./record";

/**
 * The schedule (config.ts); `stallThenLosePrimary` for the demonstration: the stall ends with the
 * primary lost, not with the standbys catching up.
 */
export type FailoverOptions = Pick<
  SoakConfig,
  | "durationMs"
  | "switchoverAt"
  | "postmasterKillAt"
  | "nodeLossAt"
  | "stallAt"
  | "nodeAwayMs"
  | "stallMs"
> & {
  stallThenLosePrimary: boolean;
};

const run = promisify(execFile);
const sleepUntil = (rec: Recorder, t: number) => pause(Math.max(0, t - rec.now()));

export async function runFailovers(
  o: FailoverOptions,
  rec: Recorder,
  cluster: PatroniCluster,
): Promise<void> {
  // Each returns the primary it took away (the next primary must be another node), if any.
  const events: { at: number; run: () => Promise<string | undefined> }[] = [
    { at: o.switchoverAt, run: () => switchover(rec, cluster) },
    { at: o.postmasterKillAt, run: () => killPostmaster(rec, cluster) },
    { at: o.nodeLossAt, run: () => loseAndRestoreNode(rec, cluster, o.nodeAwayMs) },
    { at: o.stallAt, run: () => stall(rec, cluster, o) },
  ];
  for (const e of events.filter((e) => e.at > 0).sort((a, b) => a.at - b.at)) {
    await sleepUntil(rec, e.at * o.durationMs);
    const formerPrimary = await e.run();
    // The next fault hits a whole cluster again, as a real one would be between incidents.
    await cluster.waitHealthy(90_000, formerPrimary);
    const primary = await cluster.member("leader");
    rec.fault(
      "db",
      `healthy: ${primary?.name} primary, every node streaming${cluster.o.synchronous ? ", a synchronous standby named" : ""}`,
    );
  }
}

async function leaderIndex(
  cluster: PatroniCluster,
): Promise<{ name: string; index: number; port: number }> {
  const leader = await cluster.member("leader");
  if (!leader) throw new Error("the cluster has no leader");
  return { name: leader.name, index: cluster.nodeIndex(leader.name), port: leader.port };
}

async function switchover(rec: Recorder, cluster: PatroniCluster): Promise<string> {
  const leader = await leaderIndex(cluster);
  // Patroni refuses a switchover to a standby that is not the synchronous one in synchronous mode.
  const candidate = (await cluster.member("sync_standby")) ?? (await cluster.member("replica"));
  if (!candidate) throw new Error("no standby to switch over to");
  rec.fault("db", `switchover: ${leader.name} → ${candidate.name} (patronictl)`);
  await run(PATRONICTL_BIN, [
    "-c",
    cluster.configFile(0),
    "switchover",
    "--leader",
    leader.name,
    "--candidate",
    candidate.name,
    "--force",
  ]);
  return leader.name;
}

async function killPostmaster(rec: Recorder, cluster: PatroniCluster): Promise<string> {
  const leader = await leaderIndex(cluster);
  const pid = cluster.postmasterPid(leader.index);
  if (!pid) throw new Error(`${leader.name}: no postmaster pid`);
  rec.fault("db", `kill -9 postmaster: ${leader.name} (pid ${pid})`);
  killPid(pid, "SIGKILL");
  return leader.name;
}

async function loseAndRestoreNode(
  rec: Recorder,
  cluster: PatroniCluster,
  awayMs: number,
  alsoKill: number[] = [],
): Promise<string> {
  const leader = await leaderIndex(cluster);
  rec.fault("db", `node lost: ${leader.name} (Patroni and PostgreSQL SIGKILLed)`);
  await cluster.loseNode(leader.index, alsoKill);
  await pause(awayMs);
  rec.fault("db", `node back: ${leader.name} (rejoins with pg_rewind)`);
  cluster.startNode(leader.index);
  return leader.name;
}

/** The primary's WAL senders: what carries its commits to the standbys. */
async function walSenders(port: number): Promise<number[]> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port,
    user: SUPERUSER.username,
    password: SUPERUSER.password,
    database: "postgres",
  });
  await client.connect();
  try {
    return (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_replication")).rows.map(
      (r) => r.pid,
    );
  } finally {
    await client.end();
  }
}

async function stall(
  rec: Recorder,
  cluster: PatroniCluster,
  o: FailoverOptions,
): Promise<string | undefined> {
  const leader = await leaderIndex(cluster);
  const senders = await walSenders(leader.port);
  rec.fault(
    "db",
    `stall: ${leader.name}'s WAL senders stopped (SIGSTOP) for ${Math.round(o.stallMs / 1000)} s`,
  );
  for (const pid of senders) killPid(pid, "SIGSTOP");
  await pause(o.stallMs);
  if (o.stallThenLosePrimary) {
    // What the standbys never received is gone with the machine; the stopped senders die with it.
    return loseAndRestoreNode(rec, cluster, o.nodeAwayMs, senders);
  }
  for (const pid of senders) killPid(pid, "SIGCONT");
  rec.fault("db", "stall ends: the WAL senders continue");
  return undefined;
}
