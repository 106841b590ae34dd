// The instance's open connections on real sockets: a keep-alive connection left idle is closed
// after the idle time; past the cap a new connection takes the place of the one idle the longest,
// so a crowd of idle sockets never keeps the API from a client; with none idle, the newcomer is
// closed at once and counted.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parsePreferWait } from "@once/idempotency/http";
import { Admission } from "./admission";
import { Refusals } from "../../http/refusals";
import { createFrontDoor, type DoorApp } from "./front-door";

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Requests to `/held` wait in "Next.js" until `release` is called. */
async function door(connections: { max?: number; idleMs?: number }) {
  const refusals = new Refusals();
  const app: DoorApp = {
    admission: new Admission({ served: 8 }),
    engine: { config: { maxWaitMs: 0 } },
    refusals,
  };
  const held: (() => void)[] = [];
  server = createFrontDoor({
    handle: async (req, res) => {
      if (req.url === "/held") await new Promise<void>((resolve) => held.push(resolve));
      res.end("ok");
    },
    app: () => app,
    parsePreferWait,
    connections,
    lanes: { pages: { places: 8, queued: 0, bodyBytes: 0, share: 1 } },
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, refusals, held, release: () => held.splice(0).forEach((go) => go()) };
}

/** A raw socket that sent one keep-alive GET and read its answer (or was closed first). */
async function keptAlive(port: number, path = "/api/health") {
  const socket = net.connect(port, "127.0.0.1");
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: door\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (chunk) => {
      text += String(chunk);
      if (text.endsWith("\r\n\r\nok")) resolve(text);
    });
    socket.once("close", () => resolve(text));
  });
  return { socket, answer, closed };
}

/** A GET on a connection of its own: its status, or "closed" when the door closed it unanswered. */
function getAlone(port: number, path: string): Promise<number | "closed"> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", () => resolve("closed"));
  });
}

describe("the instance's open connections", () => {
  it("closes a keep-alive connection once it has been idle", async () => {
    const { port } = await door({ idleMs: 50 });
    const { answer, closed } = await keptAlive(port);
    expect(answer).toContain("200 OK");
    await closed;
  });

  it("past the cap, closes the connection idle the longest for a new one: the API is served", async () => {
    const { port, refusals } = await door({ max: 4, idleMs: 60_000 });
    const idle = [];
    for (let i = 0; i < 4; i++) idle.push(await keptAlive(port));
    expect(idle.every((each) => each.answer.includes("200 OK"))).toBe(true);
    expect(await getAlone(port, "/api/trpc/catalog.list")).not.toBe("closed");
    await idle[0]!.closed;
    expect(idle.slice(1).every((each) => !each.socket.destroyed)).toBe(true);
    expect(refusals.snapshot()).toEqual([]);
  });

  it("past the cap with none idle, closes the oldest connection still sending its body", async () => {
    const { port, refusals } = await door({ max: 3, idleMs: 60_000 });
    let begun = 0;
    server!.on("request", () => begun++);
    const slow = [0, 1, 2].map(() => {
      const socket = net.connect(port, "127.0.0.1");
      socket.on("error", () => {});
      socket.write(
        "POST /api/session/signin HTTP/1.1\r\nHost: door\r\nContent-Length: 100\r\n\r\nname=",
      );
      return { socket, closed: new Promise<void>((resolve) => socket.once("close", resolve)) };
    });
    // Wait until every slow request has begun (its headers parsed): only then is it a sender.
    await expect.poll(() => begun).toBe(3);
    expect(await getAlone(port, "/")).toBe(200);
    await slow[0]!.closed;
    expect(slow.slice(1).every((each) => !each.socket.destroyed)).toBe(true);
    expect(refusals.snapshot()).toEqual([]);
    for (const each of slow) each.socket.destroy();
  });

  it("past the cap with every connection waiting for its answer, closes the newcomer and counts it", async () => {
    const { port, refusals, held, release } = await door({ max: 3, idleMs: 60_000 });
    const busy = [0, 1, 2].map(() => getAlone(port, "/held"));
    await expect.poll(() => held.length).toBe(3);
    expect(await getAlone(port, "/")).toBe("closed");
    expect(refusals.snapshot()).toEqual([
      { reason: "too_many_connections", stage: "connection", count: 1 },
    ]);
    release();
    expect(await Promise.all(busy)).toEqual([200, 200, 200]);
  });
});
