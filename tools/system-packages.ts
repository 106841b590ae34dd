// The Debian packages the tests start as real processes, and the one place that makes sure they
// are there. npm installs everything else; these come from apt. `npm test` checks all that its
// stages need before the first stage runs, so a machine without one of them either gets it
// installed (we are root with apt-get, as in CI) or stops in its first second with one sentence
// naming what to install, instead of failing half an hour in.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { CHROMIUM_PATH } from "./chromium";

export interface SystemPackage {
  /** The Debian package. */
  name: string;
  /** The program it installs, as the tests start it. */
  bin: string;
}

export const CHROMIUM: SystemPackage = { name: "chromium", bin: CHROMIUM_PATH };
export const HAPROXY: SystemPackage = { name: "haproxy", bin: "/usr/sbin/haproxy" };
export const PGBOUNCER: SystemPackage = { name: "pgbouncer", bin: "/usr/sbin/pgbouncer" };

export interface Machine {
  exists: (file: string) => boolean;
  /** Root with apt-get: we may install. */
  canInstall: boolean;
}

export type Plan =
  | { kind: "ready" }
  | { kind: "install"; packages: string[]; command: string }
  | { kind: "stop"; message: string };

/** What to do about `needed` on `machine`: nothing, install the missing ones, or stop and say. */
export function planPackages(needed: SystemPackage[], machine: Machine, who: string): Plan {
  const missing = [...new Set(needed.filter((p) => !machine.exists(p.bin)).map((p) => p.name))];
  if (missing.length === 0) return { kind: "ready" };
  const command = `apt-get update && apt-get install -y ${missing.join(" ")}`;
  if (machine.canInstall) return { kind: "install", packages: missing, command };
  return {
    kind: "stop",
    message: `${who} needs Debian's ${missing.join(", ")}, not installed here: run \`sudo ${command}\` (or .ci/run, which installs everything).`,
  };
}

export const thisMachine: Machine = {
  exists: existsSync,
  canInstall: process.getuid?.() === 0 && existsSync("/usr/bin/apt-get"),
};

/** Installs what is missing (root with apt-get), or prints one sentence and exits with 1. */
export function ensurePackages(needed: SystemPackage[], who: string, machine = thisMachine): void {
  const plan = planPackages(needed, machine, who);
  switch (plan.kind) {
    case "ready":
      return;
    case "install": {
      console.log(`[${who}] installing ${plan.packages.join(", ")}: ${plan.command}`);
      const log = "/tmp/once-apt.log";
      execFileSync(
        "bash",
        [
          "-c",
          `DEBIAN_FRONTEND=noninteractive ${plan.command} >${log} 2>&1 || (tail -20 ${log}; exit 1)`,
        ],
        { stdio: "inherit" },
      );
      return;
    }
    case "stop":
      console.error(plan.message);
      process.exit(1);
      return;
    default: {
      const never: never = plan;
      throw new Error(`unknown plan ${JSON.stringify(never)}`);
    }
  }
}
