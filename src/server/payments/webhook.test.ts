// POST /api/webhooks/payments through the engine's plain wrapper: redelivery changes nothing and
// answers as the first time; orders never move backwards.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { WEBHOOK_SCOPE } from "./config";
import { createEventDispatcher } from "./event-dispatcher";
import { chargedTestOrder } from "../../test/payment-fixtures";
import { handleProviderWebhook, webhookResponse } from "./webhook";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature";
import { testApp } from "../../test/app";

const t = useTestDatabase();

const SECRET = "webhook-test-secret-0123456789abcdef";

/** A delivery as the provider makes it: signed with the shared secret (webhook-door.test.ts attacks that). */
function post(body: unknown): Promise<Response> {
  const raw = JSON.stringify(body);
  const headers = { "content-type": "application/json", [SIGNATURE_HEADER]: signatureHeader(SECRET, raw, Date.now() / 1000) };
  return webhookResponse(testApp(t.db).payments, new Request("http://localhost/api/webhooks/payments", { method: "POST", headers, body: raw }), {
    secret: SECRET,
  });
}

const chargedOrder = (overrides: { sku?: string; quantity?: number } = {}) => chargedTestOrder(t.db, overrides);

describe("a webhook delivered three times", () => {
  it("changes the order once and gives three identical answers", async () => {
    const { orderId, charge, body } = await chargedOrder();
    const answers: { status: number; replayed: string | null; json: unknown }[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(body);
      answers.push({ status: res.status, replayed: res.headers.get("Idempotent-Replayed"), json: await res.json() });
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.json).toEqual({ received: true, eventId: body.id, orderId, orderStatus: "PAID", changed: true });
    expect(answers[1]!.json).toEqual(answers[0]!.json);
    expect(answers[2]!.json).toEqual(answers[0]!.json);
    expect(answers.map((a) => a.replayed)).toEqual([null, "true", "true"]);

    const order = await t.db.order.findUniqueOrThrow({ where: { id: orderId } });
    expect(order).toMatchObject({ status: "PAID", chargeId: charge.id });
    // One execution: the engine holds one completed key for the event, taken on the first attempt.
    const key = await t.db.idempotencyKey.findFirstOrThrow({ where: { scope: WEBHOOK_SCOPE, key: body.id } });
    expect(key).toMatchObject({ status: "COMPLETED", attempts: 1 });
  });

  it("a redelivery arriving concurrently still moves the order once", async () => {
    const { orderId, body } = await chargedOrder();
    const answers = await Promise.all([1, 2, 3].map(() => handleProviderWebhook(testApp(t.db).payments, body)));
    const done = answers.filter((a) => a.status === 200);
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((a) => a.status !== 200)) expect(a).toMatchObject({ status: 409, body: { reason: "request_in_progress" } });
    // One execution; the others are replays of its answer (or 409 while it ran).
    expect(done.filter((a) => !a.replayed)).toHaveLength(1);
    for (const a of done) expect(a.body).toEqual(done[0]!.body);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({ status: "PAID" });
  });
});

describe("orders never move backwards", () => {
  it("a failure event for an order already paid changes nothing", async () => {
    const { orderId, charge, body } = await chargedOrder();
    expect((await post(body)).status).toBe(200);
    // A forged-looking but real event id with another type: the provider's books decide the type,
    // and a charge.failed for a paid order would not move it anyway.
    await t.db.providerEvent.create({ data: { id: "evt_00ff", type: "charge.failed", chargeId: charge.id, payload: body.data } });
    const res = await post({ ...body, id: "evt_00ff", type: "charge.failed" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ orderStatus: "PAID", changed: false });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({ status: "PAID", chargeId: charge.id });
  });

  it("a declined charge moves the order to PAYMENT_FAILED", async () => {
    await t.db.product.update({ where: { sku: "LMP-010" }, data: { stock: 99 } });
    const { orderId, body } = await chargedOrder({ sku: "LMP-010", quantity: 99 });
    expect(body.type).toBe("charge.failed");
    expect(await (await post(body)).json()).toMatchObject({ orderStatus: "PAYMENT_FAILED", changed: true });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({ status: "PAYMENT_FAILED" });
  });
});

describe("refusals", () => {
  it("an event the provider never sent is 404 and occupies no key", async () => {
    const res = await post({
      id: "evt_deadbeef",
      type: "charge.succeeded",
      data: { chargeId: "ch_x", reference: "x", amountCents: 1, currency: "EUR", status: "SUCCEEDED" },
    });
    expect(res.status).toBe(404);
    expect(await t.db.idempotencyKey.count({ where: { scope: WEBHOOK_SCOPE, key: "evt_deadbeef" } })).toBe(0);
  });

  it("a malformed body is 400", async () => {
    expect((await post({ hello: "world" })).status).toBe(400);
  });
});

describe("the provider's event delivery", () => {
  it("delivers each event, sometimes twice, and the order changes once", async () => {
    const { orderId } = await chargedOrder();
    let deliveries = 0;
    const dispatcher = createEventDispatcher(t.db, {
      duplicateRate: 1,
      deliver: async (body) => {
        deliveries++;
        return (await handleProviderWebhook(testApp(t.db).payments, body)).status;
      },
    });
    const result = await dispatcher.runOnce();
    expect(result).toMatchObject({ failed: 0 });
    expect(result.duplicated).toBe(result.delivered);
    expect(deliveries).toBe(2 * result.delivered);
    expect(await dispatcher.runOnce()).toMatchObject({ attempted: 0 });
    expect(await t.db.providerEvent.count({ where: { deliveredAt: null } })).toBe(0);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({ status: "PAID" });
  });

  it("retries an event the webhook refused, later each time, until it is taken", async () => {
    await chargedOrder();
    let answer = 503;
    const dispatcher = createEventDispatcher(t.db, { duplicateRate: 0, random: () => 1, deliver: async () => answer });
    const first = await dispatcher.runOnce();
    expect(first.failed).toBeGreaterThan(0);
    expect(first.delivered).toBe(0);
    const waiting = await t.db.providerEvent.findMany({ where: { deliveredAt: null } });
    for (const event of waiting) {
      expect(event).toMatchObject({ attempts: 1, lastError: "the webhook answered 503" });
      expect(event.nextAttemptAt.getTime()).toBeGreaterThan(event.createdAt.getTime() + 4_000);
    }
    expect(await dispatcher.runOnce()).toMatchObject({ attempted: 0 }); // not due yet

    // Time passes (written as literal times against the database clock), the merchant is back.
    await t.db.$executeRaw`UPDATE "ProviderEvent" SET "nextAttemptAt" = now() - interval '1 second' WHERE "deliveredAt" IS NULL`;
    answer = 200;
    const second = await dispatcher.runOnce();
    expect(second).toMatchObject({ failed: 0, delivered: waiting.length });
    expect(await t.db.providerEvent.count({ where: { deliveredAt: null } })).toBe(0);
    expect(await t.db.providerEvent.findFirstOrThrow({ where: { id: waiting[0]!.id } })).toMatchObject({ attempts: 2, lastError: null });
  });
});
