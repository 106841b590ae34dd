// Where the command-line tools (worker, reconcile, jobs, seed:keys, db) find the database:
// DATABASE_URL, or the embedded PostgreSQL that a running `npm run dev` / `npm start`
// (scripts/serve.ts) announced in .data/. Those state files exist only while the app runs: it
// removes them when it stops, however it is stopped (Ctrl-C, SIGTERM, Next.js exiting).
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export const PROJECT_ROOT = path.resolve(import.meta.dirname, "../..");
export const DATA_ROOT = path.join(PROJECT_ROOT, ".data");

/**
 * Where `npm run dev` and `npm start` keep the embedded PostgreSQL's data: ONCE_PG_DATA_DIR, or a
 * folder of this clone's own under the user's data home (/var/lib/once as root), never inside the
 * project. PostgreSQL writes there all the time (WAL, statistics, crash recovery after a Ctrl-C),
 * and inside the project every write is an event for the dev server's file watcher: a storm of
 * them after a restart is what made `npm run dev` recompile and reload pages in a loop. Outside
 * the watched tree no write of PostgreSQL's can reach the watcher.
 */
export function embeddedDataDir(env: Record<string, string | undefined> = process.env): string {
  if (env.ONCE_PG_DATA_DIR) return path.resolve(env.ONCE_PG_DATA_DIR);
  const home =
    process.getuid?.() === 0
      ? "/var/lib/once"
      : path.join(env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share"), "once");
  // One folder per clone: two checkouts of the project never share a database.
  const clone = `${path.basename(PROJECT_ROOT)}-${createHash("sha256").update(PROJECT_ROOT).digest("hex").slice(0, 12)}`;
  return path.join(home, clone, "pg");
}

/**
 * Where the data lived before it moved out of the project: still there means a database left
 * behind.
 */
export const OLD_DATA_DIR = path.join(DATA_ROOT, "pg");
/** The embedded database's URL, for the tools. */
export const ANNOUNCED_URL_FILE = path.join(DATA_ROOT, "database-url");
/**
 * The payment provider the running app started (services/provider), for `npm run worker` and
 * `reconcile`.
 */
export const ANNOUNCED_PROVIDER_FILE = path.join(DATA_ROOT, "provider-url");
/**
 * The shop's secret key with that provider (mode 600, like the database's URL and its password),
 * for `npm run reconcile`.
 */
export const ANNOUNCED_PROVIDER_KEY_FILE = path.join(DATA_ROOT, "provider-key");
/**
 * The running app: `{ pid, pgPort, dataDir }`; `npm run db -- start` asks that pid to restart
 * PostgreSQL.
 */
export const APP_STATE_FILE = path.join(DATA_ROOT, "app.json");

export interface AppState {
  pid: number;
  pgPort: number;
  dataDir: string;
}

/** Where the URL came from: the tools word their "no database" sentence after it. */
export type UrlSource = "DATABASE_URL" | "the running app";

export function resolveDatabaseUrlWithSource(): { url: string; source: UrlSource } {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, source: "DATABASE_URL" };
  if (existsSync(ANNOUNCED_URL_FILE))
    return { url: readFileSync(ANNOUNCED_URL_FILE, "utf8").trim(), source: "the running app" };
  console.error(
    "No database is running: start the app with `npm run dev` (it runs the embedded PostgreSQL), or set DATABASE_URL.",
  );
  process.exit(2);
}

export function resolveDatabaseUrl(): string {
  return resolveDatabaseUrlWithSource().url;
}

/**
 * The provider's API: PAYMENTS_PROVIDER_URL as configured, else the one the running app started.
 */
export function resolveProviderUrl(configured: string | undefined): string | undefined {
  if (configured) return configured;
  return existsSync(ANNOUNCED_PROVIDER_FILE)
    ? readFileSync(ANNOUNCED_PROVIDER_FILE, "utf8").trim()
    : undefined;
}

/**
 * The shop's secret key with the provider: as configured, else the one the running app started its
 * provider with.
 */
export function resolveProviderSecretKey(configured: string | undefined): string | undefined {
  if (configured) return configured;
  return existsSync(ANNOUNCED_PROVIDER_KEY_FILE)
    ? readFileSync(ANNOUNCED_PROVIDER_KEY_FILE, "utf8").trim()
    : undefined;
}

export function readAppState(): AppState | null {
  try {
    const state = JSON.parse(readFileSync(APP_STATE_FILE, "utf8")) as Partial<AppState>;
    if (
      !Number.isInteger(state.pid) ||
      !Number.isInteger(state.pgPort) ||
      typeof state.dataDir !== "string"
    )
      return null;
    return state as AppState;
  } catch {
    return null;
  }
}
