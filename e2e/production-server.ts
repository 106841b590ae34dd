// A production server as an operator runs it, for the doors tests: `next start` (the build must
// exist) with NODE_ENV=production and no DEMO_MODE, on a free port, over its own embedded
// PostgreSQL in a temp folder. The database is seeded *in demo mode* first: the demo accounts and
// tokens are in it, as they are where someone demoed the app before going live, and must open
// nothing. `users()` runs the real `npm run users` CLI against it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { rmSync } from "node:fs";
import path from "node:path";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { setupDatabase } from "../tools/db/setup";
import { startNextInstance } from "../tools/next/instance";

const root = path.resolve(import.meta.dirname, "..");

export interface ProductionServer {
  baseURL: string;
  /** The `next start` process (the memory tests read its peak RSS). */
  pid: number;
  /** Runs `npm run users -- <args>` against this server's database; the password goes on stdin. */
  users(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Stops PostgreSQL for real (the health test); `stop()` still cleans up. */
  stopDatabase(): Promise<void>;
  stop(): Promise<void>;
}

export async function startProductionServer(): Promise<ProductionServer> {
  const dataDir = await makeTempDataDir("once-e2e-prod-");
  let pg: EmbeddedServer | undefined = await startEmbeddedPostgres({ dataDir, persistent: false });
  await pg.createDatabase("once");
  const databaseUrl = pg.url("once");
  await setupDatabase(databaseUrl, () => {}, { demo: true }); // a demo happened here once

  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    // Production refuses to start without the secret the provider signs its webhooks with.
    PAYMENTS_WEBHOOK_SECRET: randomBytes(24).toString("hex"),
    // …and without the shop's secret key with the provider.
    PAYMENTS_PROVIDER_SECRET_KEY: `sk_${randomBytes(24).toString("hex")}`,
    ONCE_BACKGROUND_JOBS: "0",
    DEMO_MODE: "0", // production: no demo doors
  };
  const next = await startNextInstance(env);

  const stopDatabase = async () => {
    const server = pg;
    pg = undefined;
    await server?.stop();
  };
  return {
    baseURL: next.baseURL,
    pid: next.process.pid!,
    stopDatabase,
    async users(args, stdin = "") {
      const child = spawn(
        process.execPath,
        [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/users.ts", ...args],
        {
          cwd: root,
          env: { ...process.env, ...env },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.stdin.end(stdin);
      const [code] = (await once(child, "exit")) as [number];
      return { code, stdout, stderr };
    },
    async stop() {
      await next.stop();
      await stopDatabase();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}
