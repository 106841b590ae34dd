// CPU time of a server, read from /proc: user + system time of the process and of every live
// descendant (so it stays right should `next start` ever serve from a child process), plus the
// time of descendants that have exited. The last part matters for PostgreSQL: a backend exits
// when the pool closes an idle connection, and its CPU time then moves into the postmaster's
// cutime/cstime; without those the total would go down.
import { readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

/** Clock ticks per second, the unit of /proc/<pid>/stat (100 on Linux nearly always). */
const TICKS_PER_SECOND =
  Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/**
 * utime + stime of one process and of its exited, reaped children (cutime + cstime), in ms; 0 if it
 * is gone.
 */
function ownCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: count fields after the last
    // ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14–17 of proc(5): utime, stime, cutime, cstime.
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8")
        .split(" ")
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** CPU ms used so far by `pid` and its descendants. */
export function treeCpuMs(pid: number): number {
  return ownCpuMs(pid) + childrenOf(pid).reduce((sum, child) => sum + treeCpuMs(child), 0);
}

/** CPU ms used so far by several servers together. */
export function cpuMsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + treeCpuMs(pid), 0);
}
