// The package's conformance kit against T3's post.create, through the app's real route
// (/api/trpc on `next start`), inputs and answers through superjson as T3's client sends them.
import { randomUUID } from "node:crypto";
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import superjson from "superjson";
import { ANONYMOUS_IDS, cookieOf, postsNamed, useApp } from "./support";

const t = useApp();

// A request's effect is the post it creates: each input has a name of its own, so the posts with
// the name the key was first sent with are that request's effects.
const nameOfKey = new Map<string, string>();
const nameOf = (input: unknown) => (input as { name: string }).name;

runConformance({
  name: "examples/t3 post.create",
  transformer: superjson,
  send: (options) => {
    const sent = `${options.caller ?? 0} ${options.key}`;
    if (!nameOfKey.has(sent)) nameOfKey.set(sent, nameOf(options.input));
    const callers = [
      cookieOf(ANONYMOUS_IDS[0]),
      cookieOf(ANONYMOUS_IDS[1]),
    ] as const;
    return trpcSender({
      url: `${t.server.url}/api/trpc/post.create`,
      callers: [...callers],
      transformer: superjson,
    })(options);
  },
  input: () => ({ name: `post-${randomUUID()}` }),
  otherInput: (input) => ({ name: `${nameOf(input)} (other)` }),
  effects: async (key, caller = 0) => {
    const name = nameOfKey.get(`${caller} ${key}`);
    return name === undefined ? 0 : postsNamed(t.database.url, name);
  },
  scopes: [`anonymous:${ANONYMOUS_IDS[0]}`, `anonymous:${ANONYMOUS_IDS[1]}`],
  get databaseUrl() {
    return t.database.url;
  },
  stopStore: () => t.database.stop(),
  startStore: () => t.database.start(),
});
