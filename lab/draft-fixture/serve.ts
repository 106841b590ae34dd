// `npm run fixture:draft [-- --port 4100]`: serves the Idempotency-Key draft fixture (route.ts) on
// loopback, over the app's database (`npm run dev`'s, or DATABASE_URL), for a conformance suite:
//   POST /resources, PATCH /resources/<id>, GET /resources/<id>, GET /stats
import { createServer } from "node:http";
import { toNodeHandler } from "@once/idempotency/http";
import { createDb } from "@/server/db/client";
import { createEngineFor } from "@/server/engine";
import { requireDatabase } from "../../tools/db/require-database";
import { draftFixture } from "./route";

const portArg = process.argv.indexOf("--port");
const port = portArg > 0 ? Number(process.argv[portArg + 1]) : 4100;
const url = await requireDatabase();
const fixture = draftFixture(createEngineFor(createDb(url, { max: 8 }), {}, { listenUrl: url }), {
  docs: `http://127.0.0.1:${port}/docs/errors`,
});

const listener = toNodeHandler(fixture.handle, { origin: `http://127.0.0.1:${port}` });
const server = createServer((req, res) => void listener(req, res));
server.listen(port, "127.0.0.1", () =>
  console.log(`draft fixture on http://127.0.0.1:${port}/resources (pid ${process.pid})`),
);
