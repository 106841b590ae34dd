// The conformance kit against a plain route protected by @once/idempotency/http (no tRPC): the
// same rules as against a tRPC procedure, read from problem details. The engine listens (replay
// cache on), as a production route's does.
import { httpSender, runConformance } from "../src/conformance/index";
import { idempotent } from "../src/http/index";
import { useTestDatabase } from "./support/database";
import { useListeningEngine, type Tx } from "./support/harness";

const t = useTestDatabase();
const listening = useListeningEngine(t);

const SCOPES: Record<string, string> = {
  "Bearer acme_token": "acme",
  "Bearer globex_token": "globex",
};
let route: ((request: Request) => Promise<Response>) | undefined;
const routeOf = () =>
  (route ??= idempotent<Tx>(
    async (request, { tx, key, scope }) => {
      const input = (await request.json()) as { value: string; refuse?: boolean };
      if (input.refuse)
        return Response.json({ reason: "refused", message: "refused" }, { status: 412 });
      const row = await tx.testEffect.create({ data: { scope, value: `${key}:${input.value}` } });
      return Response.json({ id: row.id });
    },
    {
      engine: listening.engine,
      scope: (request) =>
        SCOPES[request.headers.get("authorization") ?? ""] ?? new Response(null, { status: 401 }),
    },
  ));

let n = 0;
runConformance({
  name: "a plain Fetch API route",
  send: httpSender({
    url: "http://localhost/api/effects",
    callers: [{ authorization: "Bearer acme_token" }, { authorization: "Bearer globex_token" }],
    fetch: (request) => routeOf()(request),
  }),
  input: () => ({ value: `v${++n}` }),
  otherInput: (input) => ({ ...(input as object), value: "other" }),
  effects: async (key, caller = 0) =>
    t.db.testEffect.count({
      where: { scope: caller === 0 ? "acme" : "globex", value: { startsWith: `${key}:` } },
    }),
  scopes: ["acme", "globex"],
  get databaseUrl() {
    return t.url;
  },
  failingInput: () => ({ value: "refused", refuse: true }),
});
