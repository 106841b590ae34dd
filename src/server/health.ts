// The health answer: up or down, and nothing else. A health endpoint is public (load balancers
// call it without credentials), so it must not tell a stranger the database's host, port or
// driver: the reason a check failed goes to the log, not to the caller.
import type { Db } from "./db/client";
import { logger } from "./logger";

export type HealthBody = { status: "up"; database: "up" } | { status: "down"; database: "down" };

export async function checkHealth(db: Db): Promise<Response> {
  try {
    await db.$queryRaw`SELECT 1`;
    return Response.json({ status: "up", database: "up" } satisfies HealthBody, { headers: { "Cache-Control": "no-store" } });
  } catch (error) {
    logger.warn({ err: error }, "health check: the database does not answer");
    return Response.json({ status: "down", database: "down" } satisfies HealthBody, {
      status: 503,
      headers: { "Retry-After": "1", "Cache-Control": "no-store" },
    });
  }
}
