// A production server as an operator runs it, for the doors tests: `next start` (the build must
// exist) with NODE_ENV=production and no DEMO_MODE, on a free port, over its own embedded
// PostgreSQL in a temp folder. The database is seeded *in demo mode* first: the demo accounts and
// tokens are in it, as they are where someone demoed the app before going live, and must open
// nothing. `users()` runs the real `npm run users` CLI against it.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { freePort, makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { setupDatabase } from "../tools/db/setup";

const root = path.resolve(import.meta.dirname, "..");

export interface ProductionServer {
  baseURL: string;
  /** Runs `npm run users -- <args>` against this server's database; the password goes on stdin. */
  users(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Stops PostgreSQL for real (the health test); `stop()` still cleans up. */
  stopDatabase(): Promise<void>;
  stop(): Promise<void>;
}

/** Resolves when `next start` prints that it is ready; rejects if it exits first. */
async function ready(next: ChildProcess): Promise<void> {
  const lines = createInterface({ input: next.stdout! });
  const exited = once(next, "exit").then(([code]) => {
    throw new Error(`next start exited (${code}) before it was ready`);
  });
  const readyLine = (async () => {
    for await (const line of lines) if (/Ready in/.test(line)) return;
  })();
  await Promise.race([readyLine, exited]);
}

export async function startProductionServer(): Promise<ProductionServer> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID"))) throw new Error("no production build: run `npm run build` first");
  const dataDir = await makeTempDataDir("once-e2e-prod-");
  let pg: EmbeddedServer | undefined = await startEmbeddedPostgres({ dataDir, persistent: false });
  await pg.createDatabase("once");
  const databaseUrl = pg.url("once");
  await setupDatabase(databaseUrl, () => {}, { demo: true }); // a demo happened here once

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: randomBytes(24).toString("hex"),
    // Production refuses to start without the secret the provider signs its webhooks with.
    PAYMENTS_WEBHOOK_SECRET: randomBytes(24).toString("hex"),
    ONCE_BACKGROUND_JOBS: "0",
    NEXT_TELEMETRY_DISABLED: "1",
  };
  delete env.DEMO_MODE; // production: no demo doors
  const next = spawn(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  await ready(next);

  const stopDatabase = async () => {
    const server = pg;
    pg = undefined;
    await server?.stop();
  };
  return {
    baseURL: `http://127.0.0.1:${port}`,
    stopDatabase,
    async users(args, stdin = "") {
      const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/users.ts", ...args], {
        cwd: root,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.stdin.end(stdin);
      const [code] = (await once(child, "exit")) as [number];
      return { code, stdout, stderr };
    },
    async stop() {
      if (next.exitCode === null && next.signalCode === null) {
        next.kill("SIGTERM");
        await once(next, "exit", { signal: AbortSignal.timeout(5_000) }).catch(() => next.kill("SIGKILL"));
      }
      await stopDatabase();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}
