// The package's draft conformance kit against both servers, each configured with one line
// (`headerNames: "draft"`), as the packed tarball installed it.
import { randomUUID } from "node:crypto";
import { runDraftConformance } from "@once/idempotency/conformance";

const auth = { authorization: "Bearer example-caller" };
const report = () => ({ title: `report-${randomUUID()}`, rows: 3 });

for (const [name, env] of [
  ["Hono (@hono/node-server)", "HONO_URL"],
  ["node:http (toNodeHandler)", "NODE_HTTP_URL"],
] as const)
  runDraftConformance({
    name,
    url: () => `${process.env[env]}/reports`,
    headers: auth,
    headerNames: "draft",
    body: report,
    // 30 000 lines: about 1.5 MB, over the engine's 1 MiB stored-answer limit.
    largeBody: () => ({ title: `large-${randomUUID()}`, rows: 30_000 }),
    refusedBody: () => ({ title: "", rows: 1 }),
  });
