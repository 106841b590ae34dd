// The conformance kit against a plain route protected by @once/idempotency/http (no tRPC): the
// same rules as against a tRPC procedure, read from problem details. The engine listens (replay
// cache on), as a production route's does; after the kit ages a key the test waits until the
// engine's listener has heard the kit's eviction notice.
import { httpSender, runConformance } from "../src/conformance/index";
import { idempotent } from "../src/http/index";
import { useTestDatabase } from "./support/database";
import { CALLERS, effectsTarget } from "./support/conformance";
import { scopeOfAuthorization, useListeningEngine, type Tx } from "./support/harness";

const t = useTestDatabase();
const listening = useListeningEngine(t);

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
        scopeOfAuthorization(request.headers.get("authorization")) ??
        new Response(null, { status: 401 }),
    },
  ));

let n = 0;
runConformance(
  effectsTarget(t, {
    name: "a plain Fetch API route",
    send: httpSender({
      url: "http://localhost/api/effects",
      callers: CALLERS,
      fetch: (request) => routeOf()(request),
    }),
    input: () => ({ value: `v${++n}` }),
    aged: () => listening.engine.caughtUp(),
    failingInput: () => ({ value: "refused", refuse: true }),
  }),
);
