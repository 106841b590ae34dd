// The app and database that test/global-setup.ts started, for the tests beside the README's
// conformance file (test/conformance.test.ts).
import pg from "pg";
import { afterAll } from "vitest";

export const appUrl = process.env.APP_URL!;
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL });
afterAll(() => db.end());

/** Rows in the Post table with this name: the posts one request made. */
export const postsNamed = async (name: string) =>
  (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Post" WHERE "name" = $1`,
      [name]
    )
  ).rows[0]!.n;

/** A browser's anonymous id cookie (src/middleware.ts hands them out with the first page). */
export const anonymousCookie = (id: string) => ({
  cookie: `anonymous-id=${id}`,
});
