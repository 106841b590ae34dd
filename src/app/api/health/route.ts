import { serverApp } from "@/server/app";
import { checkHealth } from "@/server/health";

export const dynamic = "force-dynamic";

/**
 * 200 when the database answers and requests are finishing, 503 otherwise: what a load balancer's
 * health check wants.
 */
export async function GET() {
  const app = serverApp();
  return checkHealth(app.db, app.admission);
}
