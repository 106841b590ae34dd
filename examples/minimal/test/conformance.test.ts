// The package's conformance kit against the example's transfers.create, over real HTTP, with a
// PostgreSQL the fail-closed check really stops.
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import { CALLERS, useApp } from "./support.js";

const t = useApp();

let n = 0;
runConformance({
  name: "examples/minimal transfers.create",
  send: (options) =>
    trpcSender({ url: `${t.app.url}/transfers.create`, callers: CALLERS })(options),
  input: () => ({ to: `acct-${++n}`, amountCents: 100 + n }),
  otherInput: (input) => ({ ...(input as object), amountCents: 1 }),
  effects: async (key, caller = 0) =>
    t.app.prisma.transfer.count({
      where: { account: caller === 0 ? "alice" : "bob", requestKey: key },
    }),
  scopes: ["alice", "bob"],
  get databaseUrl() {
    return t.database.url;
  },
  // The app runs in this process: wait until its engine has heard the kit's eviction notice.
  aged: () => t.app.engine.caughtUp(),
  failingInput: () => ({ to: "acct-big", amountCents: 5_000_000 }),
  slowHeaders: { "x-slow-ms": "2500" },
  stopStore: () => t.database.stop(),
  startStore: () => t.database.start(),
});
