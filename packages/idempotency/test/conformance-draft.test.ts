// The draft's conformance kit (runDraftConformance) against an app built as the README shows: an
// idempotent route served by node:http through toNodeHandler, configured with one line
// (`headerNames: "draft"`), on a real socket and a real PostgreSQL.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { runDraftConformance } from "../src/conformance/index";
import { idempotent, toNodeHandler } from "../src/http/index";
import { useTestDatabase } from "./support/database";
import { configure, type Engine, type Tx } from "./support/harness";

const t = useTestDatabase();
let engine: Engine;
let server: Server;
let base = "";

/** POST /reports makes a report of `rows` lines (stored as an effect) and answers it whole. */
function reportsRoute(engine: Engine) {
  return idempotent<Tx>(
    async (request, { tx, scope }) => {
      const { title, rows } = (await request.json()) as { title?: string; rows?: number };
      if (!title) return Response.json({ error: "a report needs a title" }, { status: 400 });
      if (title === "warehouse-offline")
        return Response.json({ error: "try again" }, { status: 503 });
      const effect = await tx.testEffect.create({ data: { scope, value: title } });
      const lines = Array.from({ length: rows ?? 0 }, (_, i) => ({ line: i, title }));
      return Response.json(
        { id: effect.id, title, lines },
        { status: 201, headers: { location: `/reports/${effect.id}` } },
      );
    },
    {
      engine,
      scope: () => "reports",
      headerNames: "draft",
      passThrough: () => Response.json({ reports: "listed" }),
    },
  );
}

beforeAll(async () => {
  engine = configure(t.db, { maxStoredBodyBytes: 64 * 1024 });
  const listener = toNodeHandler(reportsRoute(engine));
  server = createServer((req, res) => void listener(req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await engine.close();
});

runDraftConformance({
  name: "node:http, POST /reports",
  url: () => `${base}/reports`,
  headerNames: "draft",
  body: () => ({ title: randomUUID(), rows: 2 }),
  largeBody: () => ({ title: randomUUID(), rows: 5_000 }),
  refusedBody: () => ({ title: "", rows: 1 }),
  failingBody: () => ({ title: "warehouse-offline", rows: 1 }),
});
