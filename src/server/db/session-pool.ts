// A connection pool for work that needs a session of its own (a session advisory lock held across
// several statements, LISTEN). Behind PgBouncer in transaction pooling mode, consecutive statements
// of one client may run on different server connections: a session lock taken on one is unlocked
// (or not) on another and stays held by a connection nobody owns. DATABASE_DIRECT_URL names a
// direct route to PostgreSQL for that work, as production setups give LISTEN a direct connection.
import pg from "pg";

/** Two connections: the reaper holds one while it works, and nothing else needs a session. */
const SESSION_POOL_MAX = 2;

/** A pool on `directUrl`, or undefined when there is none (then the app's own pool is direct). */
export function sessionPoolFor(directUrl: string | undefined): pg.Pool | undefined {
  if (!directUrl) return undefined;
  const pool = new pg.Pool({ connectionString: directUrl, max: SESSION_POOL_MAX, connectionTimeoutMillis: 2_000 });
  pool.on("error", () => {}); // an idle connection lost to a PostgreSQL restart: the next query opens a new one
  return pool;
}
