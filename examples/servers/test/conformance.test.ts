// The package's draft conformance kit against both servers, each configured with one line
// (`headerNames: "draft"`), as the packed tarball installed it.
import { randomUUID } from "node:crypto";
import { runDraftConformance } from "@once/idempotency/conformance";
import { inject } from "vitest";

const auth = { authorization: "Bearer example-caller" };
const report = () => ({ title: `report-${randomUUID()}`, rows: 3 });

for (const [name, script] of [
  ["Hono (@hono/node-server)", "hono"],
  ["node:http (toNodeHandler)", "node-http"],
] as const)
  runDraftConformance({
    name,
    url: () => `${inject("serverApps").urls[script]}/reports`,
    headers: auth,
    headerNames: "draft",
    body: report,
    // 30 000 lines: about 1.5 MB, over the engine's 1 MiB stored-answer limit.
    largeBody: () => ({ title: `large-${randomUUID()}`, rows: 30_000 }),
    refusedBody: () => ({ title: "", rows: 1 }),
  });
