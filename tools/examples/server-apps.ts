// What the examples of servers that are not Next.js (examples/servers: Hono, node:http) are tested
// against, started once for all their test files by their Vitest global setup: a real PostgreSQL
// holding the engine's tables (from the @once/idempotency the example installed, the packed
// tarball) and the example's own, and each server as its own process on a free port, as
// `npm run <script>` starts it. Test files find each server's address through Vitest's
// provide/inject (`inject("serverApps")`, a ServerApps), and the database in DATABASE_URL.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createExampleTables } from "./example-tables";
import { makeTempDataDir, ownShutdownSignals, startEmbeddedPostgres } from "../db/embedded";
import { freePort, isProcessAlive } from "../process";

/** Starts `npm run <script>` in `app` on a free port; resolves once it says it listens. */
export async function startServer(app: string, script: string, databaseUrl: string) {
  const port = await freePort();
  const child = spawn("npm", ["run", script, "--silent"], {
    cwd: app,
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true, // its own process group: npm, tsx and node stop together
  });
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before listening`)));
  });
  await listening;
  return { child, url: `http://127.0.0.1:${port}` };
}

export function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = once(child, "exit").then(() => {});
  process.kill(-child.pid!, "SIGTERM");
  return exited;
}

/** What the setup gives the example's tests: `inject("serverApps")`. */
export interface ServerApps {
  /** Each server's URL, by its npm script. */
  urls: Record<string, string>;
  /**
   * With `stoppable`: the same servers on a PostgreSQL of their own that a test stops for real
   * (stopPostgres(dataDir)).
   */
  stoppable?: { urls: Record<string, string>; dataDir: string };
}

/**
 * The part of Vitest's TestProject a global setup uses (tools/ is typed without the example's own
 * Vitest, which the example's ProvidedContext names "serverApps" in).
 */
interface ProvidingProject {
  provide(key: "serverApps", value: ServerApps): void;
}

/** PostgreSQL with the example's tables, and each of `scripts` (npm scripts) started on it. */
async function databaseWithServers(app: string, ownSql: string, scripts: string[], label: string) {
  const dataDir = await makeTempDataDir(`once-example-${path.basename(app)}${label}-`);
  const database = await startEmbeddedPostgres({ dataDir, persistent: false });
  const servers: ChildProcess[] = [];
  const urls: Record<string, string> = {};
  const stop = async () => {
    await Promise.all(servers.map(stopGroup));
    await database.stop();
  };
  try {
    const databaseUrl = database.url("postgres");
    await createExampleTables(app, databaseUrl, ownSql);
    await Promise.all(
      scripts.map(async (script) => {
        const server = await startServer(app, script, databaseUrl);
        servers.push(server.child);
        urls[script] = server.url;
      }),
    );
    return { databaseUrl, dataDir, urls, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The Vitest global setup of the example in `app`: PostgreSQL, the tables (`ownSql` makes the
 * example's own), and the servers of the npm `scripts`. With `stoppable`, the same servers again
 * on a PostgreSQL of their own that a test stops for real (ServerApps.stoppable).
 */
export function serverAppsSetup(
  app: string,
  ownSql: string,
  scripts: string[],
  options: { stoppable?: boolean } = {},
) {
  return async function setup(project: ProvidingProject): Promise<() => Promise<void>> {
    ownShutdownSignals();
    const main = await databaseWithServers(app, ownSql, scripts, "");
    process.env.DATABASE_URL = main.databaseUrl;
    if (!options.stoppable) {
      project.provide("serverApps", { urls: main.urls });
      return main.stop;
    }
    const stoppable = await databaseWithServers(app, ownSql, scripts, "-stoppable").catch(
      async (error: unknown) => {
        await main.stop();
        throw error;
      },
    );
    project.provide("serverApps", {
      urls: main.urls,
      stoppable: { urls: stoppable.urls, dataDir: stoppable.dataDir },
    });
    return async () => {
      await Promise.all([main.stop(), stoppable.stop()]);
    };
  };
}

/**
 * Stops the PostgreSQL whose data folder is `dataDir` for real (a fast shutdown of its
 * postmaster, as `pg_ctl stop -m fast` does), and resolves once it has gone; again is a no-op.
 */
export async function stopPostgres(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  } catch {
    return; // no postmaster.pid: already stopped
  }
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return; // already gone
  }
  while (isProcessAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}
