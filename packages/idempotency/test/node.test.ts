// The node:http adapter: an idempotent Fetch route served by Node's own server, through a real
// socket. What Express and Fastify mount is this same (req, res) listener.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { idempotent, toNodeHandler, type NodeHandler } from "../src/http/index";
import { useTestDatabase } from "./support/database";
import { configure, keyRow, type Engine, type Tx } from "./support/harness";

const t = useTestDatabase();
let engine: Engine | undefined;
let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
  await engine?.close();
  engine = undefined;
});

async function serve(listener: NodeHandler): Promise<string> {
  server = createServer((req, res) => void listener(req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A route that records one effect per execution and answers 201 with it. */
function refunds() {
  engine = configure(t.db);
  let executions = 0;
  const route = idempotent<Tx>(
    async (request) => {
      executions++;
      const { amount } = (await request.json()) as { amount: number };
      return Response.json(
        { id: randomUUID(), amount },
        {
          status: 201,
          headers: [
            ["location", "/refunds/1"],
            ["set-cookie", "a=1"],
            ["set-cookie", "b=2"],
          ],
        },
      );
    },
    {
      engine,
      scope: () => "acme",
      passThrough: (request) => new Response(`read ${new URL(request.url).pathname}`),
    },
  );
  return { route, executions: () => executions };
}

describe("toNodeHandler", () => {
  it("serves a protected route: the first answer whole (each Set-Cookie apart), a retry replays its bytes, the handler runs once", async () => {
    const { route, executions } = refunds();
    const base = await serve(toNodeHandler(route));
    const key = randomUUID();
    const send = () =>
      fetch(`${base}/refunds?x=1`, {
        method: "POST",
        headers: { "idempotency-key": key, "content-type": "application/json" },
        body: '{"amount":5}',
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    const firstBody = await first.text();
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("location")).toBe("/refunds/1");
    expect(await replay.text()).toBe(firstBody);
    expect(executions()).toBe(1);
    expect(await keyRow(t.db, "acme", key)).toMatchObject({
      status: "COMPLETED",
      procedure: "POST /refunds",
    });
  });

  it("passes GET through, and refuses a POST without a key with a problem", async () => {
    const { route } = refunds();
    const base = await serve(toNodeHandler(route));
    const read = await fetch(`${base}/refunds/7`);
    expect(await read.text()).toBe("read /refunds/7");
    const refused = await fetch(`${base}/refunds`, { method: "POST", body: "{}" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(await refused.json()).toMatchObject({ reason: "idempotency_key_missing" });
  });

  it("a body a parser already read (Express's json() before the route) is a 500 whose problem details say so, and records nothing", async () => {
    const { route, executions } = refunds();
    const errors: unknown[] = [];
    const listener = toNodeHandler(route, { onError: (error) => errors.push(error) });
    const base = await serve(async (req, res) => {
      // What a body parser does: reads the stream, leaves the parsed body on the request.
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString()) as unknown });
      await listener(req, res);
    });
    const key = randomUUID();
    const res = await fetch(`${base}/refunds`, {
      method: "POST",
      headers: { "idempotency-key": key, "content-type": "application/json" },
      body: '{"amount":5}',
    });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(((await res.json()) as { detail: string }).detail).toMatch(/before any body parser/);
    expect(String(errors[0])).toMatch(/before any body parser/);
    expect(executions()).toBe(0);
    expect(await keyRow(t.db, "acme", key)).toBeNull();
  });
});
