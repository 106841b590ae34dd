// The API as users reach it under `npm start`: the front door on a real socket hands `/api/trpc/*`
// and the payment webhook straight to the app's handlers (ServerApp.routes), Next.js left out. The
// doors hold as they did behind Next.js (the cross-site refusal, the body limit, the batch limit,
// the idempotency contract, the security headers every answer carries, the peer's address), and
// everything else still reaches Next.js.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parsePreferWait } from "@once/idempotency/http";
import { useTestDatabase } from "../../test/database";
import { TOKENS } from "../../test/http";
import { testApp } from "../../test/app";
import type { ServerApp } from "../app";
import { SESSION_COOKIE } from "../auth/session";
import { createFrontDoor, directRouteOf, type DoorApp } from "./front-door";
import { TRPC_BODY_LIMIT_BYTES } from "../../http/body-limit";
import { Admission } from "./admission";
import { apiRoutesFor } from "./api-routes";

const t = useTestDatabase();
const HEADERS = { "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff" };

let server: http.Server;
let base: string;
let port: number;
/** What reached the handler standing in for Next.js. */
const toNext: string[] = [];
/** Requests as the app's handlers received them. */
const received: Request[] = [];
let app: ServerApp;

beforeAll(async () => {
  app = testApp(t.db);
  const routes = app.routes!;
  const recording: DoorApp = {
    ...app,
    routes: {
      trpc: (req, read) => (received.push(req), routes.trpc(req, read)),
      webhook: (req, read) => (received.push(req), routes.webhook(req, read)),
    },
  };
  server = createFrontDoor({
    handle: async (req, res) => {
      toNext.push(`${req.method} ${req.url}`);
      res.end("next");
    },
    app: () => recording,
    parsePreferWait,
    direct: { headers: HEADERS, port: 0 },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function productId(): Promise<string> {
  const product = await t.db.product.findFirstOrThrow({ where: { stock: { gt: 10 } } });
  return product.id;
}

const checkout = (key: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKENS.acme}`,
      "content-type": "application/json",
      "idempotency-key": key,
      ...headers,
    },
    body,
  });

describe("the API served by the front door, without Next.js", () => {
  it("answers a tRPC query with the app's handler and the headers of every answer", async () => {
    const before = toNext.length;
    const res = await fetch(`${base}/api/trpc/catalog.list`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { result: { data: { sku: string }[] } };
    expect(body.result.data.length).toBeGreaterThan(0);
    expect(toNext.length).toBe(before);
    // The request as Next.js hands it to a route: the full URL, the peer's address, the
    // x-forwarded-* headers Next.js fills in when a client sent none.
    const seen = received.at(-1)!;
    expect(seen.url).toBe(`${base}/api/trpc/catalog.list`);
    expect(seen.headers.get("x-once-peer-address")).toBe("127.0.0.1");
    expect(seen.headers.get("x-forwarded-for")).toBe("127.0.0.1");
    expect(seen.headers.get("x-forwarded-proto")).toBe("http");
  });

  it("keeps the idempotency contract: a checkout, then its replay byte for byte", async () => {
    const key = randomUUID();
    const body = JSON.stringify({ items: [{ productId: await productId(), quantity: 1 }] });
    const first = await checkout(key, body);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotency-key-expires")).toBeTruthy();
    const firstBody = await first.text();
    const again = await checkout(key, body);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstBody);
    const orders = await t.db.order.count({ where: { idempotencyKey: key } });
    expect(orders).toBe(1);
  });

  it("hands the handler one request, made once the body is in and carrying it", async () => {
    const key = randomUUID();
    const body = JSON.stringify({ items: [{ productId: await productId(), quantity: 1 }] });
    const before = received.length;
    const answered = new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          path: "/api/trpc/checkout.placeOrder",
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKENS.acme}`,
            "content-type": "application/json",
            "idempotency-key": key,
            "transfer-encoding": "chunked",
          },
        },
        (res) => resolve(res.resume().statusCode!),
      );
      req.on("error", reject);
      req.write(body.slice(0, 10));
      // Half the body sent: a request sent after it on another connection is answered, and the
      // half-sent one has reached no handler.
      void fetch(`${base}/api/trpc/catalog.list`)
        .then((res) => {
          expect(res.status).toBe(200);
          expect(received.slice(before).map((r) => r.url)).toEqual([
            `${base}/api/trpc/catalog.list`,
          ]);
        })
        .then(() => req.end(body.slice(10)), reject);
    });
    expect(await answered).toBe(200);
    const seen = received.at(-1)!;
    expect(seen.url).toBe(`${base}/api/trpc/checkout.placeOrder`);
    expect(seen.headers.get("content-length")).toBe(String(body.length));
    expect(seen.headers.get("transfer-encoding")).toBeNull();
    expect(await t.db.order.count({ where: { idempotencyKey: key } })).toBe(1);
  });

  it("refuses a cross-site mutation that carries the session cookie (403), nothing recorded", async () => {
    const key = randomUUID();
    const res = await checkout(key, JSON.stringify({ items: [] }), {
      cookie: `${SESSION_COOKIE}=whatever`,
      origin: "http://evil.example",
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { data: { reason: string } } };
    expect(body.error.data.reason).toBe("cross_site_request");
    expect(await t.db.idempotencyKey.count({ where: { key } })).toBe(0);
  });

  it("refuses a declared body over the limit (413) before reading it, and closes the connection", async () => {
    const size = 10 * TRPC_BODY_LIMIT_BYTES;
    const answer = await rawPost("/api/trpc/checkout.placeOrder", size, {
      "content-length": String(size),
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe("close");
    expect(answer.headers["x-frame-options"]).toBe("DENY");
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { data: { reason: "payload_too_large", httpStatus: 413 } },
    });
  });

  it("refuses a streamed (chunked) body once it passes the limit (413)", async () => {
    const answer = await rawPost("/api/trpc/checkout.placeOrder", 4 * TRPC_BODY_LIMIT_BYTES, {
      "transfer-encoding": "chunked",
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe("close");
  });

  it("refuses a batch over the limit (400 batch_too_large) before any call runs", async () => {
    const paths = Array.from({ length: 50 }, () => "catalog.list").join(",");
    const res = await fetch(`${base}/api/trpc/${paths}?batch=1&input={}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("answers the payment webhook with its handler: an unsigned event is 400 with its reason", async () => {
    const before = toNext.length;
    const res = await fetch(`${base}/api/webhooks/payments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "evt_1", type: "charge.succeeded" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { reason: string }).reason).toMatch(/signature/);
    expect(toNext.length).toBe(before);
  });

  it("hands Next.js everything else: pages, other routes, other methods and shapes", async () => {
    const sent = [
      ["GET", "/"],
      ["GET", "/api/health"],
      ["GET", "/api/webhooks/payments"],
      ["PUT", "/api/trpc/catalog.list"],
      ["GET", "/api/trpc/catalog.list/"],
    ] as const;
    for (const [method, path] of sent)
      expect(await (await fetch(`${base}${path}`, { method })).text()).toBe("next");
    expect(toNext.slice(-sent.length)).toEqual(sent.map(([m, p]) => `${m} ${p}`));
  });
});

/** How long the line may take to reach a state: generous, for a machine busy with other tests. */
const PATIENCE = { timeout: 60_000, interval: 20 };

describe("a client that leaves while its request queues for a place", () => {
  it("is not served: its checkout never runs, and the next in line gets the place", async () => {
    // One place, held by the test; a line with a long wait, as under a crowd.
    const admission = new Admission({ served: 1, waitMs: 60_000 });
    let release!: () => void;
    const held = admission.admit(
      () => new Promise<Response>((done) => (release = () => done(new Response("held")))),
    );
    const routes = apiRoutesFor({ ...app, admission });
    const door = createFrontDoor({
      handle: async (_req, res) => void res.end("next"),
      app: () => ({ ...app, admission, routes }),
      parsePreferWait,
      direct: { headers: HEADERS, port: 0 },
    });
    await new Promise<void>((resolve) => door.listen(0, "127.0.0.1", resolve));
    const doorBase = `http://127.0.0.1:${(door.address() as AddressInfo).port}`;
    try {
      const body = JSON.stringify({ items: [{ productId: await productId(), quantity: 1 }] });
      const headersFor = (key: string) => ({
        authorization: `Bearer ${TOKENS.acme}`,
        "content-type": "application/json",
        "idempotency-key": key,
      });
      const goneKeys = [randomUUID(), randomUUID(), randomUUID()];
      const leaving = goneKeys.map((key) => {
        const req = http.request(`${doorBase}/api/trpc/checkout.placeOrder`, {
          method: "POST",
          headers: headersFor(key),
        });
        req.on("error", () => {}); // destroyed below, on purpose
        req.end(body);
        return req;
      });
      await vi.waitFor(() => expect(admission.queued).toBe(3), PATIENCE);
      const stayingKey = randomUUID();
      const staying = fetch(`${doorBase}/api/trpc/checkout.placeOrder`, {
        method: "POST",
        headers: headersFor(stayingKey),
        body,
      });
      await vi.waitFor(() => expect(admission.queued).toBe(4), PATIENCE);
      for (const req of leaving) req.destroy();
      await vi.waitFor(() => expect(admission.queued).toBe(1), PATIENCE);

      release();
      await held;
      expect((await staying).status).toBe(200);
      expect(await t.db.order.count({ where: { idempotencyKey: stayingKey } })).toBe(1);
      expect(await t.db.order.count({ where: { idempotencyKey: { in: goneKeys } } })).toBe(0);
      expect(await t.db.idempotencyKey.count({ where: { key: { in: goneKeys } } })).toBe(0);
      expect(admission.size).toBe(0);
    } finally {
      door.closeAllConnections();
      await new Promise((resolve) => door.close(resolve));
    }
  });
});

describe("directRouteOf", () => {
  it.each([
    ["GET", "/api/trpc/catalog.list?batch=1&input=%7B%7D", "trpc"],
    ["POST", "/api/trpc/checkout.placeOrder", "trpc"],
    ["POST", "/api/webhooks/payments", "webhook"],
    ["GET", "/api/trpc/", undefined],
    ["GET", "/api/trpc/a/b", undefined],
    ["HEAD", "/api/trpc/catalog.list", undefined],
    ["GET", "/api/webhooks/payments", undefined],
    ["POST", "/api/webhooks/payments/", undefined],
    ["GET", "/api/trpcx/catalog.list", undefined],
  ] as const)("%s %s → %s", (method, url, route) => {
    expect(directRouteOf(method, url)).toBe(route);
  });
});

/** A POST of `size` bytes written by hand (so a declared length may exceed what is sent). */
function rawPost(
  path: string,
  size: number,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKENS.acme}`,
          "content-type": "application/json",
          "idempotency-key": randomUUID(),
          ...headers,
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    // The server may answer and close before the whole body is sent: that is the point.
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error);
    });
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}
