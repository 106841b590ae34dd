// The package's conformance kit against post.create, through the running app's /api/trpc route.
// With the app running (npm run build && npm start) and Vitest installed (npm install -D vitest):
//   APP_URL=http://localhost:3000 DATABASE_URL=<as in .env> npx vitest run test/conformance.test.ts
import { randomUUID } from "node:crypto";
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import pg from "pg";
import superjson from "superjson";
import { afterAll } from "vitest";

const appUrl = process.env.APP_URL ?? "http://localhost:3000";
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl)
  throw new Error("Set DATABASE_URL to the app's database (as in .env)");

// Two browsers, each with the anonymous id src/middleware.ts would give it: two scopes.
const browsers = [randomUUID(), randomUUID()] as const;
const send = trpcSender({
  url: `${appUrl}/api/trpc/post.create`,
  callers: [
    { cookie: `anonymous-id=${browsers[0]}` },
    { cookie: `anonymous-id=${browsers[1]}` },
  ],
  transformer: superjson,
});

// A request's effect is the post it creates. Every input has a name of its own, so the posts with
// the name a key was first sent with are the effects of that key's request.
const nameOfKey = new Map<string, string>();
const nameOf = (input: unknown) => (input as { name: string }).name;
const db = new pg.Pool({ connectionString: databaseUrl });
afterAll(() => db.end());

runConformance({
  name: "post.create",
  transformer: superjson,
  send: (options) => {
    const sent = `${options.caller ?? 0} ${options.key}`;
    if (!nameOfKey.has(sent)) nameOfKey.set(sent, nameOf(options.input));
    return send(options);
  },
  input: () => ({ name: `post-${randomUUID()}` }),
  otherInput: (input) => ({ name: `${nameOf(input)} (other)` }),
  effects: async (key, caller = 0) => {
    const name = nameOfKey.get(`${caller} ${key}`);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Post" WHERE "name" = $1`,
      [name]
    );
    return rows[0]!.n;
  },
  scopes: [`anonymous:${browsers[0]}`, `anonymous:${browsers[1]}`],
  databaseUrl,
});
