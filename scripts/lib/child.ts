// Stopping a child process we started, by its handle (so by its pid, never by name).
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";

/** A graceful stop (SIGTERM), or a kill after `graceMs`: shutdown must end even if the child hangs. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  await once(child, "exit", { signal: AbortSignal.timeout(graceMs) }).catch(() => child.kill("SIGKILL"));
}
