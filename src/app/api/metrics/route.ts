// Prometheus scrape endpoint (admin bearer): see src/server/metrics.ts.
import { getDb } from "@/server/db/client";
import { handleMetricsRequest } from "@/server/metrics";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleMetricsRequest(getDb(), req);
}
