// Where a bench's processes run. On one machine the load generator (autocannon, in the bench's own
// process), PostgreSQL, the payment worker and the provider share the cores with the server they
// measure. A split gives the servers measured some cores alone and everything else the others, as
// a server and its clients are placed in production: apart (bench:overload --crowd's
// `--server-cores`).
import { execFileSync } from "node:child_process";
import os from "node:os";

export interface CoreSplit {
  /** The cores of the servers measured, in taskset's list syntax. */
  server: string;
  /** Every other core: the bench's own process and everything it starts besides the servers. */
  rest: string;
}

/** Cores as taskset's list syntax gives them ("0", "0,2", "0-1"). */
function coresOf(list: string, name: string): number[] {
  return list.split(",").flatMap((part) => {
    const [from, to = from] = part.split("-").map((n) => (/^\d+$/.test(n) ? Number(n) : NaN));
    if (!Number.isInteger(from) || !Number.isInteger(to) || from! > to!)
      throw new Error(`${name}: "${list}" is not a list of cores (e.g. 0, 0,2 or 0-1)`);
    return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
  });
}

/**
 * The split that `asked` (the servers' cores, in taskset's syntax) means on a machine of `all`
 * cores, or undefined when nothing is asked: every process on every core. `name` is the knob's,
 * for the error.
 */
export function coreSplit(
  asked: string | undefined,
  name: string,
  all = os.availableParallelism(),
): CoreSplit | undefined {
  if (!asked) return undefined;
  const server = [...new Set(coresOf(asked, name))].sort((a, b) => a - b);
  if (server.some((core) => core >= all))
    throw new Error(`${name}: "${asked}" names a core this machine lacks (it has ${all})`);
  const rest = [...Array(all).keys()].filter((core) => !server.includes(core));
  if (rest.length === 0)
    throw new Error(`${name}: "${asked}" leaves no core for the load generator`);
  return { server: server.join(","), rest: rest.join(",") };
}

/**
 * This process, every thread of it, onto `cores`; every process it starts from now on inherits
 * them (but for a server started on cores of its own: onCores).
 */
export function moveThisProcessTo(cores: string): void {
  execFileSync("taskset", ["-a", "-p", "-c", cores, String(process.pid)], { stdio: "ignore" });
}

/** A server's command line, on `cores` when given (taskset execs it: the pid is the server's). */
export function onCores(
  cores: string | undefined,
  command: string,
  args: string[],
): [string, string[]] {
  return cores ? ["taskset", ["-c", cores, command, ...args]] : [command, args];
}
