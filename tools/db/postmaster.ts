// A PostgreSQL server found by its own pid file: `postmaster.pid` in its data folder, which
// PostgreSQL writes on start and removes on a clean stop. Line 1 is the pid, line 2 the data
// folder, line 4 the port, line 8 the state ("ready" once it accepts connections). Acting only
// on the server whose pid file sits in *our* data folder, and only after checking that the pid
// is still that server, is what makes stopping it safe on a machine with other PostgreSQLs.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { isProcessAlive, waitFor } from "../process";

export interface Postmaster {
  pid: number;
  port: number;
  dataDir: string;
  /** Accepting connections (not starting up or shutting down). */
  ready: boolean;
}

/** The pid's command line names this data folder (Linux); elsewhere the pid file's word stands. */
function runsOn(pid: number, dataDir: string): boolean {
  const cmdline = `/proc/${pid}/cmdline`;
  if (!existsSync("/proc/self/cmdline")) return true;
  try {
    const args = readFileSync(cmdline, "utf8").split("\0");
    return path.basename(args[0] ?? "").startsWith("postgres") && args.includes(dataDir);
  } catch {
    return false; // the process is gone
  }
}

/** The PostgreSQL running on `dataDir`, or null (no pid file, a stale one, or a reused pid). */
export function findPostmaster(dataDir: string): Postmaster | null {
  const resolved = path.resolve(dataDir);
  let lines: string[];
  try {
    lines = readFileSync(path.join(resolved, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return null;
  }
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || path.resolve(lines[1] ?? "") !== resolved) return null;
  if (!isProcessAlive(pid) || !runsOn(pid, resolved)) return null;
  return { pid, port, dataDir: resolved, ready: (lines[7] ?? "").trim() === "ready" };
}

/**
 * Fast shutdown (SIGINT): PostgreSQL ends every open session at once, so connections in use
 * really fail, as in an outage. (SIGTERM, a "smart" shutdown, waits for clients to leave: nothing
 * would fail.) Resolves once the process is gone.
 */
export async function stopPostmaster(server: Postmaster, timeoutMs = 20_000): Promise<void> {
  try {
    process.kill(server.pid, "SIGINT");
  } catch {
    return; // already gone
  }
  await waitFor(
    `PostgreSQL (pid ${server.pid}) to stop`,
    () => !isProcessAlive(server.pid),
    timeoutMs,
  );
}
