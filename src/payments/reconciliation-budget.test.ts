// A hostile provider costs a reconciliation run its budget and no more: one that says `has_more:
// true` for ever, one that answers a gigabyte for a page, one that stops in the middle of its
// answer. Each is a small HTTP server of the test's own on a free port; the run is the real one,
// against the test database. The assertions are on what was read (pages, bytes), not on times.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import type { ReconcileBudget } from "./config";
import { createProviderClient } from "./provider";
import { createReconciliation } from "./reconciliation";

const t = useTestDatabase();
const KEY = "sk_test_hostile_provider_0123456789abcdef";
const MiB = 1024 * 1024;

/** What the hostile server saw and sent. */
interface Served {
  requests: URL[];
  bytesSent: number;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});

async function hostile(
  answer: (req: http.IncomingMessage, res: http.ServerResponse, served: Served) => void,
) {
  const served: Served = { requests: [], bytesSent: 0 };
  const server = http.createServer((req, res) => {
    served.requests.push(new URL(req.url ?? "/", "http://hostile"));
    answer(req, res, served);
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, served };
}

const reconciliation = (url: string, budget: Partial<ReconcileBudget>) =>
  createReconciliation(t.db, createProviderClient(url, KEY), {
    settleSeconds: 0,
    budget: { maxPages: 1_000, maxPageBytes: MiB, maxRunMs: 60_000, ...budget },
  });

/**
 * Pages of failed charges (nothing to find in them), 100 each, starting at the asked creation
 * second and 10 ms apart, every one of them saying there are more.
 */
function endlessPages(req: http.IncomingMessage, res: http.ServerResponse, served: Served) {
  const url = new URL(req.url ?? "/", "http://hostile");
  const from = Number(url.searchParams.get("created[gte]") ?? 1_700_000_000);
  const n = served.requests.length;
  const data = Array.from({ length: 100 }, (_, i) => ({
    id: `ch_${n}_${i}`,
    status: "FAILED",
    reference: `not-an-order-${n}-${i}`,
    amountCents: 100,
    currency: "EUR",
    created: from + (n * 100 + i) / 100,
  }));
  const body = JSON.stringify({ object: "list", data, has_more: true });
  served.bytesSent += Buffer.byteLength(body);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(body);
}

describe("a provider that says has_more for ever", () => {
  it("costs a run its pages, and the next run goes on from where it stopped", async () => {
    const { url, served } = await hostile(endlessPages);
    const run = reconciliation(url, { maxPages: 20 });

    const first = await run.runOnce();
    // 18 of its 20 pages: the main lists stop at 90 %, the rest is kept for looking up orders
    // they did not match (there are none here).
    expect(first.budget).toMatchObject({ pages: 18, stopped: { reason: "pages" } });
    expect(served.requests).toHaveLength(18);
    // Every byte read was a page served, one page at a time: 18 pages of about 12 KB.
    expect(first.budget.bytes).toBe(served.bytesSent);
    expect(first.budget.bytes).toBeLessThan(20 * 16 * 1024);
    expect(first.continueFrom).toBeInstanceOf(Date);
    const resume = await t.db.reconciliationCursor.findUniqueOrThrow({
      where: { name: "provider-charges:resume" },
    });
    expect(resume.judgedThrough).toEqual(first.continueFrom);

    // The next run's recent list starts at the second the first one stopped at: nothing skipped,
    // and not back at the start of the window (which would freeze it).
    const before = served.requests.length;
    const second = await run.runOnce();
    expect(second.budget.stopped?.reason).toBe("pages");
    const recentList = served.requests
      .slice(before)
      .find((u) => u.searchParams.get("limit") === "100")!;
    expect(Number(recentList.searchParams.get("created[gte]"))).toBe(
      first.continueFrom!.getTime() / 1000,
    );
    expect(second.continueFrom!.getTime()).toBeGreaterThan(first.continueFrom!.getTime());
  });

  it("npm run reconcile's --all stops too: runSince returns where to go on", async () => {
    const { url, served } = await hostile(endlessPages);
    const result = await reconciliation(url, { maxPages: 5 }).runSince(undefined);
    expect(result.budget).toMatchObject({ pages: 4, stopped: { reason: "pages" } });
    expect(served.requests).toHaveLength(4);
    expect(result.continueFrom).toBeInstanceOf(Date);
  });
});

describe("a provider that answers a gigabyte for a page", () => {
  const GiB = 1024 * MiB;
  const chunk = Buffer.alloc(64 * 1024, " ");

  /** A gigabyte of JSON whitespace after an opening brace, written as the reader takes it. */
  const gigabyte =
    (declare: boolean) =>
    (_req: http.IncomingMessage, res: http.ServerResponse, served: Served) => {
      res.writeHead(200, {
        "content-type": "application/json",
        ...(declare ? { "content-length": String(GiB) } : {}),
      });
      let closed = false;
      res.on("close", () => (closed = true));
      const pump = () => {
        while (!closed && served.bytesSent < GiB) {
          served.bytesSent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!closed) res.end();
      };
      served.bytesSent += 1;
      res.write("{");
      pump();
    };

  it.each([
    ["streamed without a length", false],
    ["declared in its Content-Length", true],
  ])("is refused after the byte cap, %s", async (_how, declare) => {
    const { url, served } = await hostile(gigabyte(declare));
    const result = await reconciliation(url, { maxPageBytes: MiB }).runOnce();
    expect(result.budget.stopped).toEqual({
      reason: "page-too-large",
      detail: expect.stringMatching(/larger than 1048576 bytes/),
    });
    // One request: the run stops at the first page it refuses.
    expect(served.requests).toHaveLength(1);
    // What left the server before the connection closed: the cap and the sockets' buffers, not
    // the gigabyte.
    expect(served.bytesSent).toBeLessThan(MiB + 8 * MiB);
    expect(result.budget.bytes).toBe(0);
  });
});

describe("a provider that stops in the middle of its answer", () => {
  it("is ended by the run's time budget", async () => {
    const { url, served } = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"object":"list","data":[');
      served.bytesSent += 25;
      // …and nothing more, the connection held open.
    });
    const result = await reconciliation(url, { maxRunMs: 300 }).runOnce();
    expect(result.budget.stopped?.reason).toBe("time");
    expect(served.requests).toHaveLength(1);
    expect(result.budget.pages).toBe(0);
  });
});
