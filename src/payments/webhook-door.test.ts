// The webhook's door: only the provider may speak through it, and only briefly. Unsigned, forged,
// tampered or replayed-late deliveries are 400 with a reason and leave no trace; a body over the
// limit is 413 and is not read.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { BODY_READ_DEADLINE_MS, WEBHOOK_BODY_LIMIT_BYTES } from "../http/body-limit";
import { countingStream } from "../http/test-streams";
import { DEMO_WEBHOOK_SECRET, WEBHOOK_SCOPE } from "./config";
import { loadConfig } from "../server/config";
import { chargedTestOrder, placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { waitFor } from "../../tools/process";
import { webhookResponse } from "./webhook";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature";
import { testApp } from "../test/app";

const t = useTestDatabase();
const provider = useTestProvider();
const SECRET = "door-test-secret-0123456789abcdef-xyz";
const NOW = 1_900_000_000; // unix seconds: a literal clock for the tolerance

/**
 * A charged order whose event has not been delivered: its raw event body, as the provider sends it.
 */
async function pendingEvent() {
  const { orderId, eventId, body } = await chargedTestOrder(t.db, provider);
  return { orderId, eventId, raw: JSON.stringify(body) };
}

function post(raw: string, signature: string | null) {
  const headers = new Headers({ "content-type": "application/json" });
  if (signature !== null) headers.set(SIGNATURE_HEADER, signature);
  const request = new Request("http://localhost/api/webhooks/payments", {
    method: "POST",
    headers,
    body: raw,
  });
  return webhookResponse(testApp(t.db).payments, request, {
    secret: SECRET,
    nowSeconds: () => NOW,
  });
}

/**
 * Nothing happened: the order still waits for its payment, and the engine holds no key for the
 * event.
 */
async function expectNothingRecorded(orderId: string, eventId: string) {
  expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
    status: "PENDING",
    chargeId: null,
  });
  expect(await t.db.idempotencyKey.count({ where: { scope: WEBHOOK_SCOPE, key: eventId } })).toBe(
    0,
  );
}

describe("the provider's signature", () => {
  it.each([
    ["no signature", () => null, "webhook_signature_missing"],
    [
      "a signature made with another secret",
      (raw: string) => signatureHeader("not-the-secret-0123456789abcdef-xyz", raw, NOW),
      "webhook_signature_invalid",
    ],
    [
      "a signature of another body",
      (raw: string) => signatureHeader(SECRET, raw.replace("charge", "chargf"), NOW),
      "webhook_signature_invalid",
    ],
    ["a malformed header", () => "t=abc,v1=zz", "webhook_signature_invalid"],
    [
      "a signature six minutes old",
      (raw: string) => signatureHeader(SECRET, raw, NOW - 360),
      "webhook_signature_stale",
    ],
    [
      "a signature six minutes ahead",
      (raw: string) => signatureHeader(SECRET, raw, NOW + 360),
      "webhook_signature_stale",
    ],
  ] as const)("%s is 400 and records nothing", async (_name, sign, reason) => {
    const { orderId, eventId, raw } = await pendingEvent();
    const res = await post(raw, sign(raw));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ reason, docs: `/docs/errors#${reason}` });
    expect(res.headers.get("link")).toBe(`</docs/errors#${reason}>; rel="describedby"`);
    await expectNothingRecorded(orderId, eventId);
  });

  it("a correctly signed event within the tolerance is taken, also with a second (rotated) v1", async () => {
    const { orderId, raw } = await pendingEvent();
    const rotated = `${signatureHeader(SECRET, raw, NOW - 299)},v1=${"0".repeat(64)}`;
    const res = await post(raw, rotated);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      received: true,
      orderId,
      orderStatus: "PAID",
      changed: true,
    });
  });
});

describe("the provider's HTTP delivery", () => {
  it("the provider service signs each event and sends some twice; the webhook behind a real socket takes it, once", async () => {
    const deliveries: string[] = [];
    async function serve(req: http.IncomingMessage, res: http.ServerResponse) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      deliveries.push(Buffer.concat(chunks).toString());
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === "string") headers.set(name, value);
      const answer = await webhookResponse(
        testApp(t.db).payments,
        new Request(`http://localhost${req.url}`, {
          method: req.method,
          headers,
          body: Buffer.concat(chunks),
        }),
        {
          secret: SECRET,
        },
      );
      res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
    }
    const server = http.createServer((req, res) => void serve(req, res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo;
      // Every event delivered twice (at least once, as real providers deliver).
      const sender = await provider.withFaults({
        webhook: { url: `http://127.0.0.1:${port}/api/webhooks/payments`, secret: SECRET },
        duplicateRate: 1,
      });
      const { orderId, totalCents } = await placeTestOrder(t.db);
      const outbox = await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: orderId } });
      const charge = await sender.client.charge({
        idempotencyKey: outbox.idempotencyKey,
        reference: orderId,
        amountCents: totalCents,
        currency: "EUR",
      });
      await waitFor(
        "the order paid by the webhook",
        async () =>
          (await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).status === "PAID",
      );
      // (The sender also delivers the earlier tests' events from the shared books: count this
      // charge's.)
      await waitFor(
        "the second delivery",
        () => deliveries.filter((d) => d.includes(charge.id)).length >= 2,
      );
      expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
        chargeId: charge.id,
      });
      const [event] = await provider.events(charge.id);
      expect(
        await t.db.idempotencyKey.findFirstOrThrow({
          where: { scope: WEBHOOK_SCOPE, key: event!.id },
        }),
      ).toMatchObject({
        status: "COMPLETED",
        attempts: 1,
      });
    } finally {
      server.close();
    }
  });
});

describe("the body limit", () => {
  it("a 10 MB chunked body is 413 and the webhook stops reading it at the limit", async () => {
    const { orderId, eventId, raw } = await pendingEvent();
    const body = countingStream(10 * 1024 * 1024, 64 * 1024);
    const request = new Request("http://localhost/api/webhooks/payments", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [SIGNATURE_HEADER]: signatureHeader(SECRET, raw, NOW),
      },
      body: body.stream,
      duplex: "half",
    } as RequestInit);
    const res = await webhookResponse(testApp(t.db).payments, request, {
      secret: SECRET,
      nowSeconds: () => NOW,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ reason: "payload_too_large" });
    expect(body.pulled()).toBeLessThanOrEqual(WEBHOOK_BODY_LIMIT_BYTES + 2 * 64 * 1024); // not 10 MB
    expect(body.cancelled()).toBe(true);
    await expectNothingRecorded(orderId, eventId);
  });

  it("a declared Content-Length over the limit is 413 before a byte is read", async () => {
    const body = countingStream(10 * 1024 * 1024, 64 * 1024);
    const request = new Request("http://localhost/api/webhooks/payments", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(10 * 1024 * 1024) },
      body: body.stream,
      duplex: "half",
    } as RequestInit);
    expect(
      (await webhookResponse(testApp(t.db).payments, request, { secret: SECRET })).status,
    ).toBe(413);
    expect(body.pulled()).toBe(0);
  });
});

describe("a body the front door read from the socket", () => {
  const request = (raw: string, signature: string, body?: string) =>
    new Request("http://localhost/api/webhooks/payments", {
      method: "POST",
      headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signature },
      ...(body === undefined ? {} : { body }),
    });

  it("is taken as read, once: a signed event moves its order, and its redelivery is a replay", async () => {
    const { orderId, raw } = await pendingEvent();
    const signature = signatureHeader(SECRET, raw, NOW);
    const deliver = () =>
      webhookResponse(
        testApp(t.db).payments,
        request(raw, signature, raw),
        { secret: SECRET, nowSeconds: () => NOW },
        { ok: true, bytes: new TextEncoder().encode(raw) },
      );
    const first = await deliver();
    expect(first.status).toBe(200);
    const answer = await first.text();
    expect(JSON.parse(answer)).toMatchObject({ orderId, orderStatus: "PAID", changed: true });
    const again = await deliver();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(answer);
  });

  it("not in by the body deadline is 408 request_timeout, the socket not reused, nothing recorded", async () => {
    const { orderId, eventId, raw } = await pendingEvent();
    const res = await webhookResponse(
      testApp(t.db).payments,
      request(raw, signatureHeader(SECRET, raw, NOW)),
      { secret: SECRET, nowSeconds: () => NOW },
      { ok: false, timedOutMs: BODY_READ_DEADLINE_MS },
    );
    expect(res.status).toBe(408);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toMatchObject({ reason: "request_timeout" });
    await expectNothingRecorded(orderId, eventId);
  });
});

describe("the signing secret's configuration", () => {
  it("outside demo mode it must be set, or the server refuses to start with a sentence that says so", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(
      /PAYMENTS_WEBHOOK_SECRET is not set/,
    );
    expect(() => loadConfig({ PAYMENTS_WEBHOOK_SECRET: "short" })).toThrow(
      /at least 32 characters/,
    );
    const key = { PAYMENTS_PROVIDER_SECRET_KEY: "sk_live_0123456789abcdef0123456789abcdef" };
    expect(loadConfig({ ...key, PAYMENTS_WEBHOOK_SECRET: SECRET }).payments.webhookSecret).toBe(
      SECRET,
    );
  });

  it("in demo mode the demo secret is the default, and a set secret wins", () => {
    expect(loadConfig({ DEMO_MODE: "1" }).payments.webhookSecret).toBe(DEMO_WEBHOOK_SECRET);
    expect(
      loadConfig({ DEMO_MODE: "1", PAYMENTS_WEBHOOK_SECRET: SECRET }).payments.webhookSecret,
    ).toBe(SECRET);
  });
});
