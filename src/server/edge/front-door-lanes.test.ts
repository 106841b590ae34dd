// Every route through the front door's bounds, on a real socket: a refused body is answered and
// then read and dropped, so a client still sending it (Node's fetch) reads the answer; a page's
// body is held to its own small limit; and a crowd on one route is refused from its own lane while
// the other routes are served.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePreferWait } from "@once/idempotency/http";
import { useTestDatabase } from "../../test/database";
import { testApp } from "../../test/app";
import type { ServerApp } from "../app";
import { createFrontDoor, type DoorApp } from "./front-door";
import { CROWD, PAGE_BODY_LIMIT_BYTES } from "./lanes";
import { countingStream } from "../../http/test-streams";

const t = useTestDatabase();
let server: http.Server;
let base: string;
let app: ServerApp;
/** What reached the handler standing in for Next.js (or health's), with the body it read. */
const toNext: { url: string; body: string }[] = [];
/** Requests to these paths wait in "Next.js" until their gate opens. */
const gates = new Map<string, Promise<void>>();

beforeAll(async () => {
  app = testApp(t.db);
  const routes = app.routes!;
  // Health is answered by the door itself (the app's route), in its own lane: held the same way.
  const door: DoorApp = {
    ...app,
    routes: {
      ...routes,
      health: async (req) => {
        toNext.push({ url: "/api/health", body: "" });
        await gates.get("/api/health");
        return routes.health(req);
      },
    },
  };
  server = createFrontDoor({
    handle: async (req, res) => {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      toNext.push({ url: req.url!, body });
      // A static file's download, as Next.js serves it: cut by its client, its promise never settles.
      if (req.url === "/never-settles") {
        res.write("part of a file");
        return new Promise<void>(() => {});
      }
      await gates.get(req.url!);
      res.end("next");
    },
    app: () => door,
    parsePreferWait,
    direct: { headers: {}, port: 0 },
    lanes: {
      pages: { places: 1, queued: 0, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 1 },
      health: { places: 1, queued: 0, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 1 },
      metrics: { places: 1, queued: 0, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 0.001, burstMs: 1 },
      session: {
        places: 1,
        queued: 64,
        bodyBytes: PAGE_BODY_LIMIT_BYTES,
        share: 0.0001,
        burstMs: 1,
      },
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Resolves once the door has written its answer to the next request it gets. */
function nextAnswerWritten(): Promise<void> {
  return new Promise((resolve) =>
    server.once("request", (_req: http.IncomingMessage, res: http.ServerResponse) =>
      res.once("finish", () => setImmediate(resolve)),
    ),
  );
}

/**
 * 10 MB sent by Node's fetch, the first MiB before the door answers and the rest after it has:
 * the bytes a door that closes at once would answer with a reset.
 */
function tenMegabytesAfterTheAnswer(declared: boolean) {
  const written = nextAnswerWritten();
  const mib = new Uint8Array(1024 * 1024);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 1) await written;
      if (sent === 10) return controller.close();
      controller.enqueue(mib);
      sent++;
    },
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (declared) headers["content-length"] = String(10 * mib.byteLength);
  return { method: "POST", headers, body, duplex: "half" } as RequestInit;
}

/** A GET through fetch, on a connection of its own. */
const get = (path: string) => fetch(`${base}${path}`, { headers: { connection: "close" } });

describe("a refused body, answered and then read and dropped", () => {
  for (const path of ["/api/trpc/checkout.placeOrder", "/api/webhooks/payments", "/"])
    for (const declared of [true, false])
      it(`lets Node's fetch read the 413 of 10 MB to ${path} (${declared ? "declared" : "chunked"})`, async () => {
        const res = await fetch(`${base}${path}`, tenMegabytesAfterTheAnswer(declared));
        expect(res.status).toBe(413);
        expect(await res.text()).toContain("payload_too_large");
      });
});

describe("a body on every route", () => {
  it("refuses a 100 MB POST to a page (413) without reading it whole", async () => {
    const upload = countingStream(100 * 1024 * 1024, 64 * 1024);
    const before = toNext.length;
    const res = await fetch(`${base}/`, {
      method: "POST",
      body: upload.stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { reason: string }).reason).toBe("payload_too_large");
    expect(upload.pulled()).toBeLessThan(100 * 1024 * 1024);
    expect(toNext.length).toBe(before);
  });

  it("refuses a declared page body over the limit before reading a byte of it", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}/`, {
        method: "POST",
        headers: { "content-length": 100 * 1024 * 1024 },
      });
      req.on("response", (res) => resolve(res.statusCode!));
      req.on("error", reject);
      req.write("x");
    });
    expect(status).toBe(413);
  });

  it("hands a body within the limit on to Next.js, whole", async () => {
    const body = "field=value&".repeat(100);
    const res = await fetch(`${base}/api/session/signout`, { method: "POST", body });
    expect(res.status).toBe(200);
    expect(toNext.at(-1)).toEqual({ url: "/api/session/signout", body });
  });
});

describe("lanes: one route's crowd does not take another's places", () => {
  for (const [flooded, other] of [
    ["/", "/api/health"],
    ["/api/health", "/"],
  ] as const)
    it(`refuses ${flooded} past its lane while ${other} and the API are served`, async () => {
      let open!: () => void;
      gates.set(flooded, new Promise((resolve) => (open = resolve)));
      const reached = toNext.length;
      const holding = get(flooded);
      await expect.poll(() => toNext.slice(reached).some((r) => r.url === flooded)).toBe(true);
      const [refused, served, api] = await Promise.all([
        get(flooded),
        get(other),
        get("/api/trpc/catalog.list"),
      ]);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await refused.text()).toContain("store_busy");
      expect(served.status).toBe(200);
      expect(api.status).toBe(200);
      open();
      gates.delete(flooded);
      expect((await holding).status).toBe(200);
      const lane = flooded === "/" ? "pages_busy" : "health_busy";
      expect(app.refusals.snapshot()).toContainEqual(
        expect.objectContaining({ reason: lane, stage: "lane" }),
      );
    });
});

describe("a client gone mid-answer", () => {
  it("gives its place back though Next.js's promise never settles", async () => {
    await new Promise<void>((resolve) => {
      const req = http.get(`${base}/never-settles`, (res) => res.once("data", () => req.destroy()));
      req.once("close", () => resolve());
      req.on("error", () => {});
    });
    // The pages lane has one place and no line: refused while the place is held, served once the
    // door has given it back (within GONE_GRACE_MS of the client leaving).
    await expect.poll(async () => (await get("/")).status, { timeout: 30_000 }).toBe(200);
  });
});

describe("a lane's share of the instance's time", () => {
  it("serves a lone client at once, however little of its share is left", async () => {
    // One place, a share of a thousandth and a burst of 1 ms: a crowd would wait a thousand times as
    // long as each request took; one client, one request after another, does not wait at all.
    for (let i = 0; i < 3; i++) expect((await get("/api/metrics")).status).toBe(200);
  });

  /** A crowd of sign-outs, held in "Next.js" until the first has reached it; their statuses. */
  async function signOutCrowd(): Promise<number[]> {
    let open!: () => void;
    gates.set("/api/session/signout", new Promise((resolve) => (open = resolve)));
    const reached = toNext.length;
    const crowd = Array.from({ length: CROWD + 2 }, () =>
      fetch(`${base}/api/session/signout`, { method: "POST", headers: { connection: "close" } }),
    );
    await expect
      .poll(() => toNext.slice(reached).some((r) => r.url.endsWith("signout")))
      .toBe(true);
    open();
    gates.delete("/api/session/signout");
    return Promise.all(crowd.map(async (res) => (await res).status));
  }

  it("holds a crowd to its share while another lane has work: its places stay idle", async () => {
    let release!: () => void;
    gates.set("/", new Promise((resolve) => (release = resolve)));
    const reached = toNext.length;
    const page = get("/");
    await expect.poll(() => toNext.slice(reached).some((r) => r.url === "/")).toBe(true);
    const statuses = await signOutCrowd();
    release();
    gates.delete("/");
    expect((await page).status).toBe(200);
    // The first ran at once; the line behind it was a crowd and a page was in progress, so the
    // place then stayed idle for 10 000 times its 1 ms (up to the lane's 2 s wait, the line's
    // deadline): the rest were refused rather than served one after another.
    expect(statuses.filter((status) => status === 200).length).toBeLessThan(statuses.length);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
  });

  it("serves a crowd alone in the instance one after another: nobody else's time to keep", async () => {
    const statuses = await signOutCrowd();
    expect(statuses.every((status) => status !== 503)).toBe(true);
  });
});
