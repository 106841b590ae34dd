// The edge configuration a deployment copies (deploy/haproxy/edge.cfg), run by the real HAProxy in
// front of two stand-in instances that hold each request until the test lets it go: past its
// places a request waits the queue's time and is refused with the API's own `store_busy`, a
// request that says it will wait goes through, and the log gives the refusal's time at the edge.
import http from "node:http";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, waitFor } from "../../../tools/process";
import { refusalTimesMs, startEdge, type Edge } from "./edge";

interface Held {
  release: () => void;
  prefer: string | undefined;
  forwardedFor: string | undefined;
}

/** A stand-in instance: answers 200 once released, and lists what it holds. */
async function standIn(held: Held[]): Promise<{ port: number; server: http.Server }> {
  const server = http.createServer((req, res) => {
    req.resume();
    held.push({
      release: () => res.end("served"),
      prefer: req.headers.prefer?.toString(),
      forwardedFor: req.headers["x-forwarded-for"]?.toString(),
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as { port: number }).port, server };
}

function post(port: number, headers: Record<string, string> = {}) {
  return fetch(`http://127.0.0.1:${port}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });
}

describe("deploy/haproxy/edge.cfg", () => {
  const held: Held[] = [];
  let servers: http.Server[] = [];
  let edge: Edge;

  beforeAll(async () => {
    const stands = [await standIn(held), await standIn(held)];
    servers = stands.map((s) => s.server);
    edge = await startEdge({
      port: await freePort(),
      instances: [stands[0]!.port, stands[1]!.port],
      maxconn: 1,
      queueMs: 100,
      retryAfterSeconds: 3,
    });
  });

  afterAll(async () => {
    await edge?.stop();
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it("refuses past each instance's places with the API's store_busy, lets a waiter through", async () => {
    // One place per instance: two requests fill them, and the instances hold them.
    const inFlight = [post(edge.port), post(edge.port)];
    await waitFor("both places taken", () => held.length === 2);
    // The instances learn the client's address from the edge (TRUSTED_PROXIES=1 believes it).
    expect(held.map((h) => h.forwardedFor)).toEqual(["127.0.0.1", "127.0.0.1"]);

    const refused = await Promise.all([post(edge.port), post(edge.port), post(edge.port)]);
    for (const res of refused) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("3");
      expect(res.headers.get("link")).toBe('</docs/errors#store_busy>; rel="describedby"');
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toEqual({
        error: {
          message: expect.stringContaining("nothing was executed"),
          code: -32603,
          data: {
            code: "SERVICE_UNAVAILABLE",
            httpStatus: 503,
            reason: "store_busy",
            docs: "/docs/errors#store_busy",
          },
        },
      });
    }
    expect(held).toHaveLength(2); // none of the refused reached an instance

    // A duplicate that will wait for the first answer is not held back by the places.
    const waiter = post(edge.port, { prefer: "wait=10" });
    await waitFor("the waiter at an instance", () => held.length === 3);
    expect(held[2]!.prefer).toBe("wait=10");

    for (const h of held) h.release();
    const served = await Promise.all([...inFlight, waiter]);
    expect(served.map((r) => r.status)).toEqual([200, 200, 200]);

    // The edge's log says how long each refusal took there: the queue's wait, and not much more.
    const times = await waitFor("the refusals in the edge's log", () => {
      const ms = edge.refusalsMs();
      return ms.length === 3 ? ms : undefined;
    });
    for (const ms of times) expect(ms).toBeGreaterThanOrEqual(100);
  });
});

describe("refusalTimesMs", () => {
  it("reads Ta of each 503 from HAProxy's HTTP log, nothing else", () => {
    const log = [
      '127.0.0.1:47526 [26/Nov/2026:04:02:59.984] api app/<NOSRV> 0/54/-1/-1/54 503 396 - - sQ-- 512/512/241/0/0 0/1 "POST /api/trpc/checkout.placeOrder HTTP/1.1"',
      '127.0.0.1:47530 [26/Nov/2026:04:02:59.990] api app/app1 0/0/0/812/+812 200 512 - - ---- 512/512/240/32/0 0/0 "POST /api/trpc/checkout.placeOrder HTTP/1.1"',
      '127.0.0.1:46934 [26/Nov/2026:04:02:59.781] api api/<NOSRV> -1/-1/-1/-1/0 400 0 - - CR-- 1/1/0/0/0 0/0 "<BADREQ>"',
      '127.0.0.1:47542 [26/Nov/2026:04:03:00.001] api app/<NOSRV> 0/66/-1/-1/66 503 396 - - sQ-- 512/512/240/0/0 0/1 "POST /api/trpc/checkout.placeOrder HTTP/1.1"',
      "",
    ].join("\n");
    expect(refusalTimesMs(log)).toEqual([54, 66]);
  });
});
