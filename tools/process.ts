// The one process toolkit of scripts, tools, tests, the soak, the benches and e2e: a free port to
// listen on, whether a pid is alive, stopping a child we started (by its handle, so by its pid,
// never by name), and waiting for a condition that another process gives us nothing to await on.
import { setTimeout as sleep } from "node:timers/promises";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import net from "node:net";

/** Asks the OS for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on this loopback port now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by someone else
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/**
 * A graceful stop (SIGTERM), or a kill after `graceMs`: shutdown must end even if the child hangs.
 */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  child.kill("SIGTERM");
  await once(child, "exit", { signal: AbortSignal.timeout(graceMs) }).catch(() =>
    child.kill("SIGKILL"),
  );
}

/**
 * Checks `check` every 100 ms until it returns something truthy, and returns that; fails after
 * `timeoutMs` with a sentence naming `what`, or at once if `child` (the process that should make
 * the condition true) has exited. A check that throws counts as "not yet".
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  child?: ChildProcess | { proc: ChildProcess },
): Promise<NonNullable<T>> {
  const proc = child && "proc" in child ? child.proc : child;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc && exited(proc)) throw new Error(`${what}: the process exited (see its log)`);
    const value = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}
