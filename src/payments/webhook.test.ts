// POST /api/webhooks/payments through the engine's plain wrapper: redelivery changes nothing and
// answers as the first time; orders never move backwards.
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { logger } from "../server/logger";
import { useTestDatabase } from "../test/database";
import { WEBHOOK_SCOPE } from "./config";
import { chargedTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { handleProviderWebhook, webhookResponse, type ProviderEventBody } from "./webhook";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature";
import { testApp } from "../test/app";

const t = useTestDatabase();
const provider = useTestProvider();

const SECRET = "webhook-test-secret-0123456789abcdef";

/**
 * A delivery as the provider makes it: signed with the shared secret (webhook-door.test.ts attacks
 * that).
 */
function post(body: unknown): Promise<Response> {
  const raw = JSON.stringify(body);
  const headers = {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: signatureHeader(SECRET, raw, Date.now() / 1000),
  };
  return webhookResponse(
    testApp(t.db).payments,
    new Request("http://localhost/api/webhooks/payments", { method: "POST", headers, body: raw }),
    {
      secret: SECRET,
    },
  );
}

const chargedOrder = (overrides: { sku?: string; quantity?: number } = {}) =>
  chargedTestOrder(t.db, provider, overrides);

describe("a webhook delivered three times", () => {
  it("changes the order once and gives three identical answers", async () => {
    const { orderId, charge, body } = await chargedOrder();
    const answers: { status: number; replayed: string | null; json: unknown }[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(body);
      answers.push({
        status: res.status,
        replayed: res.headers.get("Idempotent-Replayed"),
        json: await res.json(),
      });
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.json).toEqual({
      received: true,
      eventId: body.id,
      orderId,
      orderStatus: "PAID",
      changed: true,
    });
    expect(answers[1]!.json).toEqual(answers[0]!.json);
    expect(answers[2]!.json).toEqual(answers[0]!.json);
    expect(answers.map((a) => a.replayed)).toEqual([null, "true", "true"]);

    const order = await t.db.order.findUniqueOrThrow({ where: { id: orderId } });
    expect(order).toMatchObject({ status: "PAID", chargeId: charge.id });
    // One execution: the engine holds one completed key for the event, taken on the first attempt.
    const key = await t.db.idempotencyKey.findFirstOrThrow({
      where: { scope: WEBHOOK_SCOPE, key: body.id },
    });
    expect(key).toMatchObject({ status: "COMPLETED", attempts: 1 });
  });

  it("a redelivery arriving concurrently still moves the order once", async () => {
    const { orderId, body } = await chargedOrder();
    const answers = await Promise.all(
      [1, 2, 3].map(() => handleProviderWebhook(testApp(t.db).payments, body)),
    );
    const done = answers.filter((a) => a.status === 200);
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((a) => a.status !== 200))
      expect(a).toMatchObject({ status: 409, body: { reason: "request_in_progress" } });
    // One execution; the others are replays of its answer (or 409 while it ran).
    expect(done.filter((a) => !a.replayed)).toHaveLength(1);
    for (const a of done) expect(a.body).toEqual(done[0]!.body);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
    });
  });
});

describe("a delivery is known by its event id", () => {
  /** The order row's version: PostgreSQL gives every UPDATE of a row a new xmin. */
  async function rowVersion(orderId: string) {
    const [row] = await t.db.$queryRaw<{ version: string }[]>`
      SELECT xmin::text AS version FROM "Order" WHERE id = ${orderId}::uuid`;
    return row!.version;
  }

  it("the same event id delivered again with a changed non-key field gets 2xx and the stored answer; the order changes once", async () => {
    const { orderId, charge, body } = await chargedOrder();
    const pending = await rowVersion(orderId);
    // Providers count their deliveries in the event (Stripe's pending_webhooks, a delivery
    // attempt): the second delivery's body differs from the first, its signature is valid.
    const first = await post({ ...body, deliveryAttempt: 1 });
    expect(first.status).toBe(200);
    const firstJson: unknown = await first.json();
    const paid = await rowVersion(orderId);
    expect(paid).not.toBe(pending);

    const again = await post({ ...body, deliveryAttempt: 2 });
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(firstJson);
    expect(firstJson).toMatchObject({ eventId: body.id, orderStatus: "PAID", changed: true });

    expect(await rowVersion(orderId)).toBe(paid); // not written again
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charge.id,
    });
    expect(
      await t.db.idempotencyKey.findFirstOrThrow({ where: { scope: WEBHOOK_SCOPE, key: body.id } }),
    ).toMatchObject({ status: "COMPLETED", attempts: 1 });
  });
});

describe("orders never move backwards", () => {
  it("a failure event for an order already paid changes nothing", async () => {
    const { orderId, charge, body } = await chargedOrder();
    expect((await post(body)).status).toBe(200);
    // A charge.failed (signed: the route checked it) for an order already paid does not move it.
    const res = await post({ ...body, id: "evt_00ff", type: "charge.failed" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ orderStatus: "PAID", changed: false });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charge.id,
    });
  });

  it("a declined charge moves the order to PAYMENT_FAILED", async () => {
    await t.db.product.update({ where: { sku: "LMP-010" }, data: { stock: 99 } });
    const { orderId, body } = await chargedOrder({ sku: "LMP-010", quantity: 99 });
    expect(body.type).toBe("charge.failed");
    expect(await (await post(body)).json()).toMatchObject({
      orderStatus: "PAYMENT_FAILED",
      changed: true,
    });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAYMENT_FAILED",
    });
  });
});

describe("refusals", () => {
  it("a malformed body is 400", async () => {
    expect((await post({ hello: "world" })).status).toBe(400);
  });
});

describe("a charge someone else made for an order (tried as an attacker)", () => {
  /** A charge at the provider naming the order, with the provider's own signed event for it. */
  async function forgedCharge(orderId: string, amountCents: number, currency: string) {
    const charge = await provider.client.charge({
      idempotencyKey: `attacker-${randomUUID()}`,
      reference: orderId,
      amountCents,
      currency,
    });
    const [event] = await provider.events(charge.id);
    if (!event) throw new Error(`no event for ${charge.id}`);
    const body: ProviderEventBody = { id: event.id, type: event.type, data: event.payload };
    return { charge, body };
  }

  it("of 1 cent, or in another currency, leaves the order unpaid and is a finding", async () => {
    const { orderId, totalCents, body: ownEvent, charge: own } = await chargedOrder();
    expect(totalCents).toBeGreaterThan(1);
    const cent = await forgedCharge(orderId, 1, "EUR");
    const dollars = await forgedCharge(orderId, totalCents, "USD");
    // Every finding is said in one structured line (books/finding-log.ts, the process's logger).
    const warn = vi.spyOn(logger, "warn");
    for (const forged of [cent, dollars]) {
      const res = await post(forged.body);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        orderStatus: "PENDING",
        changed: false,
        refused: "amount_mismatch",
      });
    }
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PENDING",
      chargeId: null,
    });
    const findings = await t.db.reconciliationFinding.findMany({ where: { orderId } });
    expect(findings.map((f) => f.chargeIds[0]).sort()).toEqual(
      [cent.charge.id, dollars.charge.id].sort(),
    );
    expect(findings.every((f) => f.kind === "AMOUNT_MISMATCH" && f.resolvedAt === null)).toBe(true);
    const lines = warn.mock.calls.filter(([fields]) => (fields as { source?: string }).source);
    warn.mockRestore();
    expect(lines.map(([fields]) => fields)).toEqual(
      [cent, dollars].map((forged) => ({
        finding: expect.objectContaining({
          kind: "AMOUNT_MISMATCH",
          chargeIds: [forged.charge.id],
        }),
        state: "new",
        source: "webhook",
      })),
    );

    // The shop's own charge still pays it, with its own charge id.
    expect((await post(ownEvent)).status).toBe(200);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: own.id,
    });
  });
});
