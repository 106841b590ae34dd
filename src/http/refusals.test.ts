// Every refusal is counted by reason and stage, and /api/metrics shows the counts: the admission
// bound's store_busy, the store's (a wait for a pool connection run out), and the body's payload_too_large;
// so does the dashboard's admin.stats.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { TOKENS } from "@/test/http";
import { testAppWith } from "@/test/app";
import { createDb, type Db } from "../server/db/client";
import { handleTrpcRequest, readTrpcRequest } from "../server/api/handler";
import type { ServerApp } from "../server/app";

const t = useTestDatabase();
let pool: pg.Pool;
let busyDb: Db;
let app: ServerApp;
let onBusyDb: ServerApp;

beforeAll(() => {
  // One request in flight at most: past it and its queue, refused by the admission bound.
  app = testAppWith(t.db, { HTTP_MAX_IN_FLIGHT: "1" });
  // The same app's counters over a pool of one connection that waits 300 ms: the store's refusal.
  pool = new pg.Pool({ connectionString: t.url, max: 1, connectionTimeoutMillis: 300 });
  busyDb = createDb(t.url, { pool });
  onBusyDb = testAppWith(busyDb, { HTTP_MAX_IN_FLIGHT: "1" });
});

afterAll(async () => {
  await Promise.all([app.engine.close(), onBusyDb.engine.close()]);
  await busyDb.$disconnect();
  await pool.end();
});

const catalog = () => new Request("http://localhost/api/trpc/catalog.list");

/** The once_http_refusals_total lines of a scrape, as `{reason,stage} count`. */
async function refusalLines(): Promise<string[]> {
  const text = await app.metrics.scrape();
  return text
    .split("\n")
    .filter((line) => line.startsWith("once_http_refusals_total{"))
    .map((line) => line.replace("once_http_refusals_total", ""))
    .sort();
}

describe("refusals on /api/metrics", () => {
  it("counts the admission bound's, the store's and the body's refusals by reason and stage", async () => {
    expect(await refusalLines()).toEqual([]);

    // The admission bound: one request held in flight and its queue full (25 a place), the next
    // refused before any work.
    let release!: () => void;
    const held = app.admission.admit(
      () => new Promise<Response>((done) => (release = () => done(new Response("ok")))),
    );
    const queued = Array.from({ length: 25 }, () =>
      app.admission.admit(async () => new Response("queued")),
    );
    expect(app.admission.queued).toBe(25);
    const refused = await app.admission.admit(() => handleTrpcRequest(catalog(), app));
    expect(refused.status).toBe(503);
    release();
    await Promise.all([held, ...queued]);

    // The store: the pool's one connection held elsewhere, the query's wait runs out.
    const connection = await pool.connect();
    let busy: Response;
    try {
      busy = await handleTrpcRequest(catalog(), { ...onBusyDb, refusals: app.refusals });
    } finally {
      connection.release();
    }
    expect(busy.status).toBe(503);

    // The body: a declared length over the limit.
    const tooLarge = await readTrpcRequest(
      new Request("http://localhost/api/trpc/checkout.placeOrder", {
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKENS.acme}`,
          "content-type": "application/json",
          "content-length": String(1024 * 1024),
        },
        body: "{}",
      }),
      app,
    );
    expect(tooLarge).toBeInstanceOf(Response);
    expect((tooLarge as Response).status).toBe(413);

    expect(await refusalLines()).toEqual([
      '{reason="payload_too_large",stage="body"} 1',
      '{reason="store_busy",stage="admission"} 1',
      '{reason="store_busy",stage="store"} 1',
    ]);
    // The dashboard's counters (admin.stats) show the same.
    const stats = await handleTrpcRequest(
      new Request("http://localhost/api/trpc/admin.stats", {
        headers: { authorization: `Bearer ${TOKENS.admin}` },
      }),
      app,
    );
    const { refusals } = ((await stats.json()) as { result: { data: { refusals: unknown[] } } })
      .result.data;
    expect(refusals).toEqual(
      expect.arrayContaining([
        { reason: "store_busy", stage: "admission", count: 1 },
        { reason: "store_busy", stage: "store", count: 1 },
        { reason: "payload_too_large", stage: "body", count: 1 },
      ]),
    );
    expect(refusals).toHaveLength(3);
    // Served requests count nothing.
    expect((await handleTrpcRequest(catalog(), app)).status).toBe(200);
    expect(await refusalLines()).toHaveLength(3);
  });
});
