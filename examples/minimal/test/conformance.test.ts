// The package's conformance kit against the example's transfers.create, over real HTTP, with a
// PostgreSQL the fail-closed check really stops.
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import { afterAll, beforeAll } from "vitest";
import { CALLERS, startApp, startDatabase } from "./support.js";

let database: Awaited<ReturnType<typeof startDatabase>>;
let app: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  database = await startDatabase();
  app = await startApp(database.url);
});

afterAll(async () => {
  await app?.close();
  await database?.destroy();
});

let n = 0;
runConformance({
  name: "examples/minimal transfers.create",
  send: (options) => trpcSender({ url: `${app.url}/transfers.create`, callers: CALLERS })(options),
  input: () => ({ to: `acct-${++n}`, amountCents: 100 + n }),
  otherInput: (input) => ({ ...(input as object), amountCents: 1 }),
  effects: async (key, caller = 0) => app.prisma.transfer.count({ where: { account: caller === 0 ? "alice" : "bob", requestKey: key } }),
  scopes: ["alice", "bob"],
  get databaseUrl() {
    return database.url;
  },
  failingInput: () => ({ to: "acct-big", amountCents: 5_000_000 }),
  slowHeaders: { "x-slow-ms": "2500" },
  aged: (scope, key) => app.engine.evict(scope, key),
  stopStore: () => database.stop(),
  startStore: () => database.start(),
});
