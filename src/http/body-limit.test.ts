// tRPC's door (the route's own handler, serveTrpc): a body over the limit is 413 in tRPC's error
// shape before it is read whole, whether it declares its length or streams in chunks; a body within
// the limit reaches tRPC unchanged.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { useTestDatabase } from "../test/database";
import { TOKENS } from "../test/http";
import { appRouter } from "../server/api/root";
import { contextMaker } from "../server/api/context";
import { serveTrpc } from "../server/api/handler";
import {
  BODY_READ_DEADLINE_MS,
  boundRequestBodyWithin,
  readBodyWithin,
  TRPC_BODY_LIMIT_BYTES,
} from "./body-limit";
import { countingStream } from "./test-streams";
import { testApp } from "../test/app";

const t = useTestDatabase();
const URL = "http://localhost/api/trpc/checkout.placeOrder";
const CHUNK = 16 * 1024;

function streamed(totalBytes: number, headers: Record<string, string> = {}) {
  const body = countingStream(totalBytes, CHUNK);
  const request = new Request(URL, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: body.stream,
    duplex: "half",
  } as RequestInit);
  return { request, body };
}

const TOO_LARGE = {
  error: {
    message: `The request body is larger than ${TRPC_BODY_LIMIT_BYTES} bytes`,
    code: -32600,
    data: {
      code: "PAYLOAD_TOO_LARGE",
      httpStatus: 413,
      reason: "payload_too_large",
      docs: "/docs/errors#payload_too_large",
    },
  },
};

describe("POST /api/trpc over the limit", () => {
  it("a declared Content-Length over the limit is 413 in tRPC's shape, nothing read", async () => {
    const { request, body } = streamed(10 * 1024 * 1024, {
      "content-length": String(10 * 1024 * 1024),
    });
    const res = await serveTrpc(request, testApp(t.db));
    expect(res.status).toBe(413);
    expect(res.headers.get("link")).toBe('</docs/errors#payload_too_large>; rel="describedby"');
    expect(await res.json()).toEqual(TOO_LARGE);
    expect(body.pulled()).toBe(0);
  });

  it("a chunked body is counted as it streams and abandoned just past the limit", async () => {
    const { request, body } = streamed(10 * 1024 * 1024);
    const res = await serveTrpc(request, testApp(t.db));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(TOO_LARGE);
    expect(body.pulled()).toBeLessThanOrEqual(TRPC_BODY_LIMIT_BYTES + 2 * CHUNK);
    expect(body.cancelled()).toBe(true);
  });

  it("one byte over the limit is refused, the limit itself is read whole", async () => {
    expect(
      (await readBodyWithin(streamed(TRPC_BODY_LIMIT_BYTES + 1).request, TRPC_BODY_LIMIT_BYTES, 0))
        .ok,
    ).toBe(false);
    const exact = await readBodyWithin(
      streamed(TRPC_BODY_LIMIT_BYTES).request,
      TRPC_BODY_LIMIT_BYTES,
      0,
    );
    expect(exact.ok && exact.bytes.byteLength).toBe(TRPC_BODY_LIMIT_BYTES);
  });
});

describe("within the limit", () => {
  it("the bounded request reaches tRPC with its body and headers: a real checkout succeeds", async () => {
    const product = await t.db.product.findUniqueOrThrow({ where: { sku: "STK-008" } });
    const key = `bounded-${randomUUID()}`;
    const payload = new TextEncoder().encode(
      JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }),
    );
    // Chunked, as a streaming client sends it: no Content-Length.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(payload.slice(0, 10));
        controller.enqueue(payload.slice(10));
        controller.close();
      },
    });
    const headers = {
      "content-type": "application/json",
      authorization: `Bearer ${TOKENS.acme}`,
      "idempotency-key": key,
    };
    const original = new Request(URL, {
      method: "POST",
      headers,
      body: stream,
      duplex: "half",
    } as RequestInit);
    const bounded = await boundRequestBodyWithin(original, TRPC_BODY_LIMIT_BYTES);
    expect(bounded.ok).toBe(true);
    if (!bounded.ok) return;
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: bounded.request,
      router: appRouter,
      createContext: contextMaker(testApp(t.db)),
    });
    expect(res.status).toBe(200);
    const order = ((await res.json()) as { result: { data: { order: { id: string } } } }).result
      .data.order;
    expect(await t.db.order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({
      idempotencyKey: key,
    });
  });

  it("a GET (a query) passes through untouched", async () => {
    const get = new Request("http://localhost/api/trpc/catalog.list");
    const bounded = await boundRequestBodyWithin(get, TRPC_BODY_LIMIT_BYTES);
    expect(bounded).toEqual({ ok: true, request: get });
  });
});

/** A body that declares 4 KiB, sends its first byte and then nothing: a slow client. */
function trickling() {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array([0x7b]));
    },
    cancel() {
      cancelled = true;
    },
  });
  const request = new Request(URL, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "4096" },
    body: stream,
    duplex: "half",
  } as RequestInit);
  return { request, cancelled: () => cancelled };
}

describe("POST /api/trpc whose body does not arrive in time", () => {
  it("is given up at the deadline, not a moment before, and its stream cancelled", async () => {
    vi.useFakeTimers();
    try {
      const { request, cancelled } = trickling();
      let settled = false;
      const pending = boundRequestBodyWithin(request, TRPC_BODY_LIMIT_BYTES, BODY_READ_DEADLINE_MS);
      void pending.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(BODY_READ_DEADLINE_MS - 1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await pending).toEqual({ ok: false, timedOutMs: BODY_READ_DEADLINE_MS });
      expect(cancelled()).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("serveTrpc answers 408 request_timeout in tRPC's shape, nothing executed", async () => {
    vi.useFakeTimers();
    try {
      const { request } = trickling();
      const answer = serveTrpc(request, testApp(t.db));
      await vi.advanceTimersByTimeAsync(BODY_READ_DEADLINE_MS);
      const res = await answer;
      expect(res.status).toBe(408);
      expect(res.headers.get("link")).toBe('</docs/errors#request_timeout>; rel="describedby"');
      expect(await res.json()).toEqual({
        error: {
          message: `The request body did not arrive within ${BODY_READ_DEADLINE_MS / 1000} s; nothing was executed`,
          code: -32008,
          data: {
            code: "TIMEOUT",
            httpStatus: 408,
            reason: "request_timeout",
            docs: "/docs/errors#request_timeout",
          },
        },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it("without a deadline, a body that arrives whole is read whole", async () => {
    const { request } = streamed(1000);
    const bounded = await boundRequestBodyWithin(request, TRPC_BODY_LIMIT_BYTES, 0);
    expect(bounded.ok).toBe(true);
  });
});
