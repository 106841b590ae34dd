// The front door on a real socket: it writes the peer's address (whatever a client sent under that
// name), sets timeouts a slow client cannot stretch, and answers an API request the admission would
// refuse now with 503 store_busy before the handler (Next.js) sees it; everything else reaches the
// handler.
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parsePreferWait } from "@once/idempotency/http";
import { Admission } from "./admission";
import { PEER_ADDRESS_HEADER } from "../../http/client-address";
import {
  createFrontDoor,
  HEADERS_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  type DoorApp,
} from "./front-door";

let server: http.Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A front door on a free port whose handler records what reached it. */
async function door(app: DoorApp | undefined) {
  const reached: { url: string; peer: string | string[] | undefined }[] = [];
  server = createFrontDoor({
    handle: async (req, res) => {
      reached.push({ url: req.url!, peer: req.headers[PEER_ADDRESS_HEADER] });
      res.end("handled");
    },
    app: () => app,
    parsePreferWait,
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, reached };
}

const appWith = (admission: Admission): DoorApp => ({
  admission,
  engine: { config: { maxWaitMs: 10_000 } },
});

describe("the front door", () => {
  it("writes the socket's address, replacing what the client sent under that name", async () => {
    const { base, reached } = await door(undefined);
    await fetch(`${base}/`, {
      headers: { [PEER_ADDRESS_HEADER]: "203.0.113.66", "x-forwarded-for": "203.0.113.66" },
    });
    await fetch(`${base}/api/trpc/catalog.list`);
    expect(reached.map((r) => r.peer)).toEqual(["127.0.0.1", "127.0.0.1"]);
  });

  it("sets the headers and request timeouts, not Node's five minutes", async () => {
    await door(undefined);
    expect(server!.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(server!.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
  });

  it("refuses an API request the admission would refuse now, before the handler; pages pass", async () => {
    // One place, no queue: the place held, the next API request is refused.
    let counted = 0;
    const admission = new Admission({ served: 1, onRefuse: () => counted++ });
    let release!: () => void;
    const held = admission.admit(
      () => new Promise<Response>((done) => (release = () => done(new Response("ok")))),
    );
    const { base, reached } = await door(appWith(admission));

    const refused = await fetch(`${base}/api/trpc/catalog.list`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("connection")).toBe("keep-alive"); // no body: the socket kept
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("link")).toBe('</docs/errors#store_busy>; rel="describedby"');
    const body = (await refused.json()) as { error: { data: { reason: string } } };
    expect(body.error.data.reason).toBe("store_busy");
    expect((await fetch(`${base}/`)).status).toBe(200);
    expect(reached.map((r) => r.url)).toEqual(["/"]);

    // A body the door will not read (chunked): refused, and the connection closed.
    const chunked = await fetch(`${base}/api/trpc/checkout.placeOrder`, {
      method: "POST",
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("{}"));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(503);
    expect(chunked.headers.get("connection")).toBe("close");
    // Written from the first refusal's bytes: the same answer, each refusal counted once.
    expect(chunked.headers.get("retry-after")).toBe("1");
    expect(await chunked.json()).toEqual(body);
    expect(counted).toBe(2);

    // A place free again: the API request reaches the handler.
    release();
    await held;
    expect(await (await fetch(`${base}/api/trpc/catalog.list`)).text()).toBe("handled");
  });

  it("lets through a request that may queue: Prefer: wait, with a queue and a wait", async () => {
    const admission = new Admission({ served: 1, maxQueued: 10 });
    let release!: () => void;
    const held = admission.admit(
      () => new Promise<Response>((done) => (release = () => done(new Response("ok")))),
    );
    const { base, reached } = await door(appWith(admission));
    expect((await fetch(`${base}/api/trpc/catalog.list`)).status).toBe(503);
    const patient = await fetch(`${base}/api/trpc/catalog.list`, {
      headers: { prefer: "wait=5" },
    });
    expect(await patient.text()).toBe("handled");
    expect(reached).toHaveLength(1);
    release();
    await held;
  });
});
