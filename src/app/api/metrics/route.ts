// Prometheus scrape endpoint (admin bearer): see src/server/metrics.ts.
import { serverApp } from "@/server/app";
import { handleMetricsRequest } from "@/server/metrics";

export const dynamic = "force-dynamic";

export function GET(req: Request) {
  return handleMetricsRequest(serverApp(), req);
}
