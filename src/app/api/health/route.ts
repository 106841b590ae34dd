import { serverApp } from "@/server/app";
import { checkHealth } from "@/server/health";

export const dynamic = "force-dynamic";

/** 200 when the database answers, 503 otherwise: what a load balancer's health check wants. */
export async function GET() {
  return checkHealth(serverApp().db);
}
