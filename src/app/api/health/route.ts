import { serverApp } from "@/server/app";
import { healthAnswer } from "@/server/health";

export const dynamic = "force-dynamic";

/**
 * 200 while the database answers (up, or busy) and requests are finishing, 503 otherwise, from the
 * process's last probe (no query per caller): what a load balancer's health check wants.
 */
export async function GET() {
  const app = serverApp();
  return healthAnswer(app.health, app.admission);
}
