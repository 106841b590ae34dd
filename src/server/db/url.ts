// Where the command-line tools (worker, reconcile, jobs) find the database: DATABASE_URL, or the
// embedded PostgreSQL that a running `npm run dev` / `npm start` announced in .data/database-url.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export const ANNOUNCED_URL_FILE = path.resolve(import.meta.dirname, "../../../.data/database-url");

export function resolveDatabaseUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (existsSync(ANNOUNCED_URL_FILE)) return readFileSync(ANNOUNCED_URL_FILE, "utf8").trim();
  console.error("No database: set DATABASE_URL, or start the app first (`npm run dev` runs the embedded PostgreSQL).");
  process.exit(2);
}
