// Child processes the soak starts (next start, HAProxy, PgBouncer): each one's output goes to its
// own log file, and every one is stopped by its pid, never by name. A registry remembers them all,
// so an error or Ctrl-C stops exactly what this run started.
import { spawn, type ChildProcess } from "node:child_process";
import { openSync, closeSync, readdirSync, readFileSync } from "node:fs";
import { stopChild as stopProcess } from "../../tools/process";

export interface Child {
  name: string;
  pid: number;
  proc: ChildProcess;
  /** Resolves when the process has exited (for whatever reason). */
  exited: Promise<void>;
}

const running = new Set<Child>();

export function startChild(
  name: string,
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    logFile: string;
    /** run as this OS user (Patroni as postgres) */ user?: { uid: number; gid: number };
  },
): Child {
  const fd = openSync(options.logFile, "a");
  const proc = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", fd, fd],
    ...options.user,
  });
  closeSync(fd); // the child holds its own copy
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const child: Child = { name, pid: proc.pid, proc, exited };
  running.add(child);
  void exited.then(() => running.delete(child));
  return child;
}

export const isRunning = (child: Child) =>
  child.proc.exitCode === null && child.proc.signalCode === null;

/** The fault: no goodbye, no flush, no cleanup. */
export async function killHard(child: Child): Promise<void> {
  if (!isRunning(child)) return;
  process.kill(child.pid, "SIGKILL");
  await child.exited;
}

/** SIGTERM, and SIGKILL if it has not exited within `graceMs`. */
export async function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  await stopProcess(child.proc, graceMs);
}

const cleanups = new Set<() => Promise<void>>();

/** Something else to stop on the way out (the embedded PostgreSQL, which its package spawns). */
export function onCleanup(fn: () => Promise<void>): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/**
 * Every child still running, stopped by pid (on the way out, on error or Ctrl-C), then the rest.
 */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((child) => stopChild(child).catch(() => {})));
  for (const fn of cleanups) await fn().catch(() => {});
  cleanups.clear();
}
// Processes the soak did not spawn itself but knows by pid (a Patroni node's PostgreSQL).
export function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** The pids whose parent is `pid` (PostgreSQL's backends and auxiliary processes), from /proc. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Field 4 is the parent pid; the command name (field 2) may hold spaces, so read after its
      // ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
