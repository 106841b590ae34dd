// POST /reports on Node's own HTTP server: toNodeHandler turns the idempotent route into a
// (req, res) listener (Express: app.post("/reports", listener), before any body parser).
import { createServer } from "node:http";
import { idempotent, toNodeHandler } from "@once/idempotency/http";
import { engine } from "./engine";
import { createReport } from "./report";

const reports = toNodeHandler(
  idempotent(createReport, {
    engine,
    // Whose keys: whoever you authenticated (the bearer token stands in for your session).
    scope: (request) => request.headers.get("authorization") ?? new Response(null, { status: 401 }),
    headerNames: "draft", // the IETF draft's names: Idempotency-Replayed, Idempotency-Replay
    // Other methods (GET) are yours, untouched.
    passThrough: () => Response.json({ reports: [] }),
  }),
);

const server = createServer((req, res) => void reports(req, res));
server.listen(Number(process.env.PORT ?? 3000), () =>
  console.log(`listening on ${(server.address() as { port: number }).port}`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
