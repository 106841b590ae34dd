// Where the command-line tools (worker, reconcile, jobs, seed:keys, db) find the database:
// DATABASE_URL, or the embedded PostgreSQL that a running `npm run dev` / `npm start`
// (scripts/serve.ts) announced in .data/. Those state files exist only while the app runs: it
// removes them when it stops, however it is stopped (Ctrl-C, SIGTERM, Next.js exiting).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export const DATA_ROOT = path.resolve(import.meta.dirname, "../../.data");
/** The embedded database's URL, for the tools. */
export const ANNOUNCED_URL_FILE = path.join(DATA_ROOT, "database-url");
/** The running app: `{ pid, pgPort, dataDir }`; `npm run db -- start` asks that pid to restart PostgreSQL. */
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
  if (existsSync(ANNOUNCED_URL_FILE)) return { url: readFileSync(ANNOUNCED_URL_FILE, "utf8").trim(), source: "the running app" };
  console.error("No database is running: start the app with `npm run dev` (it runs the embedded PostgreSQL), or set DATABASE_URL.");
  process.exit(2);
}

export function resolveDatabaseUrl(): string {
  return resolveDatabaseUrlWithSource().url;
}

export function readAppState(): AppState | null {
  try {
    const state = JSON.parse(readFileSync(APP_STATE_FILE, "utf8")) as Partial<AppState>;
    if (!Number.isInteger(state.pid) || !Number.isInteger(state.pgPort) || typeof state.dataDir !== "string") return null;
    return state as AppState;
  } catch {
    return null;
  }
}
