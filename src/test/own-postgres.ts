// A PostgreSQL of a test file's own, apart from the run's shared server: for the tests that stop
// it for real (an outage, a restart) or need a server nobody else uses. Migrated and seeded (demo
// mode) unless asked otherwise; its folder goes with it.
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { createDb, type Db } from "../server/db/client";
import {
  makeTempDataDir,
  startEmbeddedPostgres,
  type EmbeddedServer,
} from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";

export interface OwnPostgres {
  url: string;
  db: Db;
  /** Stops PostgreSQL for real (a fast shutdown: open connections fail). */
  stop(): Promise<void>;
  /** Starts it again on the same folder and port. */
  start(): Promise<void>;
}

export function useOwnPostgres(options: {
  prefix: string;
  setup?: boolean;
  poolMax?: number;
}): OwnPostgres {
  const own = {} as OwnPostgres;
  let server: EmbeddedServer | undefined;
  let dataDir = "";
  let port = 0;
  beforeAll(async () => {
    dataDir = await makeTempDataDir(options.prefix);
    server = await startEmbeddedPostgres({ dataDir, persistent: true });
    port = server.port;
    await server.createDatabase("once");
    own.url = server.url("once");
    if (options.setup !== false) await setupDatabase(own.url, () => {}, { demo: true });
    own.db = createDb(own.url, { max: options.poolMax ?? 4 });
  }, 60_000);
  afterAll(async () => {
    await own.db?.$disconnect();
    await server?.stop();
    if (dataDir) await rm(path.dirname(dataDir), { recursive: true, force: true });
  });
  own.stop = async () => {
    await server?.stop();
    server = undefined;
  };
  own.start = async () => {
    server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
  };
  return own;
}
