// What the examples of servers that are not Next.js (examples/servers: Hono, node:http) are tested
// against, started once for all their test files by their Vitest global setup: a real PostgreSQL
// holding the engine's tables (from the @once/idempotency the example installed, the packed
// tarball) and the example's own, and each server as its own process on a free port, as
// `npm run <script>` starts it. Test files find each server's address in `<NAME>_URL`.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createExampleTables } from "./example-tables";
import { makeTempDataDir, ownShutdownSignals, startEmbeddedPostgres } from "../db/embedded";
import { freePort } from "../process";

/** Starts `npm run <script>` in `app` on a free port; resolves once it says it listens. */
async function startServer(app: string, script: string, databaseUrl: string) {
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

function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = once(child, "exit").then(() => {});
  process.kill(-child.pid!, "SIGTERM");
  return exited;
}

/**
 * The Vitest global setup of the example in `app`: PostgreSQL, the tables (`ownSql` makes the
 * example's own), and the servers `scripts` names (env name → npm script).
 */
export function serverAppsSetup(app: string, ownSql: string, scripts: Record<string, string>) {
  return async function setup(): Promise<() => Promise<void>> {
    ownShutdownSignals();
    const dataDir = await makeTempDataDir(`once-example-${path.basename(app)}-`);
    const database = await startEmbeddedPostgres({ dataDir, persistent: false });
    const servers: ChildProcess[] = [];
    try {
      const databaseUrl = database.url("postgres");
      await createExampleTables(app, databaseUrl, ownSql);
      for (const [name, script] of Object.entries(scripts)) {
        const server = await startServer(app, script, databaseUrl);
        servers.push(server.child);
        process.env[`${name}_URL`] = server.url;
      }
      process.env.DATABASE_URL = databaseUrl;
      return async () => {
        await Promise.all(servers.map(stopGroup));
        await database.stop();
      };
    } catch (error) {
      await Promise.all(servers.map(stopGroup));
      await database.stop();
      throw error;
    }
  };
}
