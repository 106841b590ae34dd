// The command-line tools' one sentence when there is no database to talk to, instead of a raw
// ECONNREFUSED stack: checked before the tool starts (a connection attempt), and again for any
// connection failure while it runs (the database stopped under it).
import pg from "pg";
import { isStoreUnavailable } from "@once/idempotency/operator";
import { resolveDatabaseUrlWithSource, type UrlSource } from "./url";

function where(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname}:${port || 5432}`;
  } catch {
    return "the configured address";
  }
}

export function noDatabaseSentence(url: string, source: UrlSource): string {
  return source === "DATABASE_URL"
    ? `No database is running at ${where(url)} (DATABASE_URL): start that PostgreSQL server, or unset DATABASE_URL and run the app with \`npm run dev\`.`
    : "The app's database is not running: start the app with `npm run dev`, or bring its database back with `npm run db -- start`.";
}

/** The database URL, once something answers there; otherwise one sentence and exit code 2. */
export async function requireDatabase(): Promise<string> {
  const { url, source } = resolveDatabaseUrlWithSource();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    console.error(noDatabaseSentence(url, source));
    process.exit(2);
  } finally {
    await client.end().catch(() => {});
  }
  return url;
}

/**
 * Runs a tool's body; a connection failure on the way (the database stopped under it) ends it
 * with the one sentence, anything else with its stack as before.
 */
export async function runTool(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    const { url, source } = resolveDatabaseUrlWithSource();
    console.error(noDatabaseSentence(url, source));
    process.exit(2);
  }
}
