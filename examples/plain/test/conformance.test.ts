// The package's draft conformance kit against POST /api/reports
// (examples/plain/src/app/api/reports/route.ts, one line of configuration: `headerNames: "draft"`)
// on `next start`.
import { randomUUID } from "node:crypto";
import { runDraftConformance } from "@once/idempotency/conformance";

runDraftConformance({
  name: "Next.js Route Handler, POST /api/reports",
  url: () => `${process.env.APP_URL}/api/reports`,
  headers: { authorization: "Bearer example-caller" },
  headerNames: "draft",
  body: () => ({ title: `report-${randomUUID()}`, rows: 3 }),
  // 30 000 lines: about 1.5 MB, over the engine's 1 MiB stored-answer limit.
  largeBody: () => ({ title: `large-${randomUUID()}`, rows: 30_000 }),
  refusedBody: () => ({ title: "", rows: 1 }),
});
