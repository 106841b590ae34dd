// The app instances: the production build behind its front door (scripts/front-door.ts), one port
// each, all on one database (directly or through PgBouncer). Each runs the background jobs in-process, as the app does
// (src/instrumentation.ts): reaper, sweeper, outbox worker, reconciliation.
import path from "node:path";
import { waitForPort } from "./haproxy";
import { exchange } from "./http";
import { killHard, startChild, stopChild, type Child } from "./processes";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** The app's server as `npm start` runs it: Next.js behind its front door. */
const FRONT_DOOR = ["--import", "tsx", path.join(ROOT, "scripts/front-door.ts")];

export interface InstanceOptions {
  ports: number[];
  env: Record<string, string>;
  dir: string;
}

export interface Instances {
  ports: number[];
  /** Starts all and waits until each listens. */
  startAll(): Promise<void>;
  /**
   * The fault: SIGKILL instance `i`, then start it again and wait until it listens. Returns when it
   * is back.
   */
  killAndRestart(i: number): Promise<void>;
  /** Restarts every instance at once, with `env` added. */
  restartAllWith(env: Record<string, string>): Promise<void>;
  stopAll(): Promise<void>;
}

/**
 * Next.js loads a route's code on its first request: a cold instance answers its first checkout
 * seconds late, past HAProxy's server timeout. A restarted server in production is warmed up
 * before it takes traffic; ours loads the tRPC route at once (HAProxy may already send it work).
 */
async function warmUp(port: number): Promise<void> {
  for (const path of ["/api/health", "/api/trpc/catalog.list"]) {
    await exchange({ port, method: "GET", path, headers: {}, timeoutMs: 30_000 });
  }
}

export function createInstances(o: InstanceOptions): Instances {
  const children: (Child | undefined)[] = o.ports.map(() => undefined);
  // Per instance, the restart under way: a second kill of the same instance waits for it.
  const pending: Promise<void>[] = o.ports.map(() => Promise.resolve());
  let env = o.env;

  async function start(i: number): Promise<void> {
    const port = o.ports[i]!;
    const child = startChild(
      `app${i + 1}`,
      process.execPath,
      [...FRONT_DOOR, "start", "-p", String(port), "-H", "127.0.0.1"],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          ...env,
          PORT: String(port),
          NODE_ENV: "production",
          NEXT_TELEMETRY_DISABLED: "1",
        },
        logFile: path.join(o.dir, `app${i + 1}.log`),
      },
    );
    children[i] = child;
    await waitForPort(`app${i + 1} on ${port}`, port, 60_000, child);
    await warmUp(port);
  }

  return {
    ports: o.ports,
    startAll: async () => {
      await Promise.all(o.ports.map((_, i) => start(i)));
    },
    killAndRestart(i) {
      const next = pending[i]!.then(async () => {
        const child = children[i];
        if (child) await killHard(child);
        await start(i);
      });
      pending[i] = next.catch(() => {});
      return next;
    },
    async restartAllWith(extra) {
      env = { ...env, ...extra };
      await Promise.all(pending);
      await Promise.all(children.map((c) => (c ? stopChild(c) : Promise.resolve())));
      await Promise.all(o.ports.map((_, i) => start(i)));
    },
    async stopAll() {
      await Promise.all(children.map((c) => (c ? stopChild(c) : Promise.resolve())));
    },
  };
}
