import { getDb } from "@/server/db/client";

export const dynamic = "force-dynamic";

/** 200 when the database answers, 503 otherwise: what a load balancer's health check wants. */
export async function GET() {
  const started = Date.now();
  try {
    await getDb().$queryRaw`SELECT 1`;
    return Response.json({ status: "ok", database: { status: "up", latencyMs: Date.now() - started } });
  } catch (error) {
    return Response.json(
      { status: "unavailable", database: { status: "down", error: (error as Error).message } },
      { status: 503, headers: { "Retry-After": "1" } },
    );
  }
}
