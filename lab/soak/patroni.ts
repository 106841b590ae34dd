// A high-availability PostgreSQL for the patroni profiles, on loopback only: one etcd member and
// three Patroni nodes (Debian's patroni, etcd-server and postgresql-15), each node a Patroni
// process that runs its own PostgreSQL. Patroni runs as the `postgres` user (PostgreSQL refuses
// root); every process is a child of the soak and is stopped by its pid. The settings that decide
// the behaviour under failover are explained in docs/operations.md.
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { patroniConfig } from "./patroni-config";
import { isProcessAlive, waitFor } from "../../tools/process";
import {
  childrenOf,
  isRunning,
  killHard,
  killPid,
  startChild,
  stopChild,
  type Child,
} from "./processes";
import type { ClusterOptions } from "./patroni-config";

export const PATRONI_BIN = "/usr/bin/patroni";
export const PATRONICTL_BIN = "/usr/bin/patronictl";
export const ETCD_BIN = "/usr/bin/etcd";
export { PG15_BIN, SCOPE, SUPERUSER } from "./patroni-config";
export type { ClusterOptions, NodePorts } from "./patroni-config";

export interface Member {
  name: string;
  role: "leader" | "sync_standby" | "replica" | string;
  state: string;
  port: number;
}

/**
 * PostgreSQL refuses to run as root: Patroni (and so its PostgreSQL) runs as Debian's `postgres`
 * user.
 */
const postgresUser = () => {
  const idOf = (flag: "-u" | "-g") =>
    Number(execFileSync("id", [flag, "postgres"]).toString().trim());
  return { uid: idOf("-u"), gid: idOf("-g") };
};

export class PatroniCluster {
  private etcd?: Child;
  private readonly nodes: (Child | undefined)[];
  private readonly user = postgresUser();

  constructor(readonly o: ClusterOptions) {
    this.nodes = o.nodes.map(() => undefined);
  }

  configFile = (i: number) => path.join(this.o.dir, `pg${i + 1}`, "patroni.yml");
  dataDir = (i: number) => path.join(this.o.dir, `pg${i + 1}`, "data");
  nodeIndex = (name: string) => Number(name.replace(/^pg/, "")) - 1;

  async start(): Promise<void> {
    const etcdUrl = `http://127.0.0.1:${this.o.etcdPort}`;
    const peerUrl = `http://127.0.0.1:${this.o.etcdPeerPort}`;
    // Debian's python3-etcd speaks etcd's v2 API, which etcd 3.4 serves only when asked.
    this.etcd = startChild(
      "etcd",
      ETCD_BIN,
      [
        ...["--name", "soak", "--data-dir", path.join(this.o.dir, "etcd"), "--enable-v2=true"],
        ...["--listen-client-urls", etcdUrl, "--advertise-client-urls", etcdUrl],
        ...[
          "--listen-peer-urls",
          peerUrl,
          "--initial-advertise-peer-urls",
          peerUrl,
          "--initial-cluster",
          `soak=${peerUrl}`,
        ],
      ],
      { logFile: path.join(this.o.dir, "etcd.log") },
    );
    await waitFor("etcd", async () => (await fetch(`${etcdUrl}/version`)).ok, 30_000, this.etcd);
    for (let i = 0; i < this.o.nodes.length; i++) {
      const home = path.join(this.o.dir, `pg${i + 1}`);
      mkdirSync(home, { recursive: true, mode: 0o700 });
      writeFileSync(this.configFile(i), JSON.stringify(patroniConfig(this.o, i), null, 2));
      chownSync(home, this.user.uid, this.user.gid);
      chownSync(this.configFile(i), this.user.uid, this.user.gid);
      this.startNode(i);
    }
    await this.waitHealthy(120_000);
  }

  startNode(i: number): void {
    const home = path.join(this.o.dir, `pg${i + 1}`);
    // /usr/bin/patroni: its shebang picks Debian's python3, which has Patroni's modules.
    this.nodes[i] = startChild(`patroni pg${i + 1}`, PATRONI_BIN, [this.configFile(i)], {
      env: {
        ...process.env,
        PATH: "/usr/bin:/bin",
        HOME: home,
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
      },
      cwd: home,
      logFile: path.join(this.o.dir, `pg${i + 1}.log`),
      user: this.user,
    });
  }

  /**
   * Every member up, one leader, and (synchronous mode) a synchronous standby. After a failover,
   * `notLeader` names the former primary: until Patroni has noticed the fault, the cluster still
   * looks as it did before it.
   */
  async waitHealthy(timeoutMs: number, notLeader?: string): Promise<void> {
    await waitFor(
      "the Patroni cluster",
      async () => {
        const members = await this.members();
        const up = members.filter((m) => m.state === "running" || m.state === "streaming");
        const roles = new Set(up.map((m) => m.role));
        const leader = up.find((m) => m.role === "leader");
        return (
          up.length === this.o.nodes.length &&
          leader !== undefined &&
          leader.name !== notLeader &&
          (!this.o.synchronous || roles.has("sync_standby"))
        );
      },
      timeoutMs,
      this.etcd,
    );
  }

  /** The cluster as Patroni's REST API says (asked of every node in turn: one may be down). */
  async members(): Promise<Member[]> {
    for (const node of this.o.nodes) {
      try {
        const res = await fetch(`http://127.0.0.1:${node.rest}/cluster`, {
          signal: AbortSignal.timeout(2_000),
        });
        if (res.ok) return ((await res.json()) as { members: Member[] }).members;
      } catch {
        // that node is down: ask the next
      }
    }
    return [];
  }

  async member(role: string): Promise<Member | undefined> {
    return (await this.members()).find((m) => m.role === role);
  }

  /** The postmaster's pid, from its pid file (first line), or undefined if it is not running. */
  postmasterPid(i: number): number | undefined {
    const file = path.join(this.dataDir(i), "postmaster.pid");
    if (!existsSync(file)) return undefined;
    const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? pid : undefined;
  }

  /**
   * The machine is gone: Patroni, the postmaster and every process of that PostgreSQL, SIGKILLed.
   */
  async loseNode(i: number, alsoKill: number[] = []): Promise<void> {
    const postmaster = this.postmasterPid(i);
    const node = this.nodes[i];
    if (node) await killHard(node);
    for (const pid of [...(postmaster ? [postmaster, ...childrenOf(postmaster)] : []), ...alsoKill])
      killPid(pid, "SIGKILL");
  }

  nodeRunning = (i: number) => this.nodes[i] !== undefined && isRunning(this.nodes[i]!);

  /** Patroni first (it stops its PostgreSQL), then anything left, then etcd. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => (n ? stopChild(n, 20_000) : Promise.resolve())));
    for (let i = 0; i < this.nodes.length; i++) {
      const pid = this.postmasterPid(i);
      if (pid) for (const p of [pid, ...childrenOf(pid)]) killPid(p, "SIGKILL");
    }
    if (this.etcd) await stopChild(this.etcd);
  }
}
