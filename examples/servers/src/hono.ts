// POST /reports on Hono, served by @hono/node-server: the route is the handler made idempotent,
// given Hono's Request (c.req.raw); Hono's own routes stay as they are.
import { serve } from "@hono/node-server";
import { idempotent } from "@once/idempotency/http";
import { Hono } from "hono";
import { engine } from "./engine";
import { createReport } from "./report";

const reports = idempotent(createReport, {
  engine,
  // Whose keys: whoever you authenticated (the bearer token stands in for your session).
  scope: (request) => request.headers.get("authorization") ?? new Response(null, { status: 401 }),
  headerNames: "draft", // the IETF draft's names: Idempotency-Replayed, Idempotency-Replay
});

const app = new Hono();
app.post("/reports", (c) => reports(c.req.raw));
app.get("/reports", (c) => c.json({ reports: [] }));

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, ({ port }) =>
  console.log(`listening on ${port}`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
