// checkout.placeOrder over HTTP (the real tRPC handler, in-process) against a real PostgreSQL.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { callTrpc, TOKENS, type HttpAnswer } from "../../test/http";
import { useTestDatabase } from "../../test/database";
import { createOutboxWorker } from "@/payments";
import { useTestProvider } from "../../test/provider";

// One connection per concurrent checkout: a request must never wait past the pool's 2 s connect
// timeout on a loaded machine (that answers 503, which this test is not about).
// 50 checkouts open 50 connections at once: on a loaded 2-core machine that can take longer than
// the production pool's 2 s wait, which would make this a test of the machine, not of the stock.
const t = useTestDatabase({ poolMax: 60, connectTimeoutMs: 20_000 });
const provider = useTestProvider();

function placeOrder(
  items: unknown,
  key: string,
  token: string = TOKENS.acme,
): Promise<HttpAnswer<any>> {
  return callTrpc(t.db, {
    path: "checkout.placeOrder",
    input: { items },
    token,
    key,
    method: "POST",
  });
}

async function productBySku(sku: string) {
  return t.db.product.findUniqueOrThrow({ where: { sku } });
}

/** A product of this test's own (a unique SKU), in euros unless told. */
function newProduct(data: { name: string; priceCents: number; stock: number; currency?: string }) {
  return t.db.product.create({
    data: { sku: `TEST-${randomUUID()}`, description: "", ...data },
  });
}

function expectRefused(answer: HttpAnswer<any>, status: number, reason: string) {
  expect(answer.status).toBe(status);
  expect(answer.json.error.data.reason).toBe(reason);
}

/**
 * A retry of a refused checkout: the first answer's status and body, marked replayed, from the
 * key stored FAILED with that status.
 */
async function expectReplayedRefusal(first: HttpAnswer<any>, items: unknown, key: string) {
  const again = await placeOrder(items, key);
  expect(again.status).toBe(first.status);
  expect(again.json).toEqual(first.json);
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  const stored = await t.db.idempotencyKey.findFirstOrThrow({ where: { scope: "acme", key } });
  expect(stored).toMatchObject({ status: "FAILED", responseStatus: first.status });
}

describe("placing an order", () => {
  it("writes the order, its lines, the stock and one outbox row in one go, lines merged", async () => {
    const mug = await productBySku("MUG-001");
    const tee = await productBySku("TEE-002");
    const key = `order-${randomUUID()}`;
    const cart = [
      { productId: mug.id, quantity: 2 },
      { productId: tee.id, quantity: 1 },
      { productId: mug.id, quantity: 1 },
    ];
    const res = await placeOrder(cart, key);
    expect(res.status).toBe(200);
    const order = res.json.result.data.order;
    expect(order).toMatchObject({
      status: "PENDING",
      currency: "EUR",
      totalCents: 3 * 1450 + 2900,
      chargeId: null,
    });
    expect(order.items).toEqual([
      {
        productId: mug.id,
        sku: "MUG-001",
        name: mug.name,
        unitPriceCents: 1450,
        quantity: 3,
        lineTotalCents: 4350,
      },
      {
        productId: tee.id,
        sku: "TEE-002",
        name: tee.name,
        unitPriceCents: 2900,
        quantity: 1,
        lineTotalCents: 2900,
      },
    ]);
    expect(res.headers.get("Idempotency-Key-Expires")).toBeTruthy();
    expect((await productBySku("MUG-001")).stock).toBe(mug.stock - 3);
    const stored = await t.db.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(stored).toMatchObject({ tenantId: "acme", idempotencyKey: key });
    // The answer is the order as the orders query reads it through Prisma's own mapping, to the
    // byte: the same fields in the same order, the same types (the time as an ISO string).
    const read = await callTrpc(t.db, {
      path: "orders.byId",
      input: { id: order.id },
      token: TOKENS.acme,
    });
    expect(JSON.stringify(order)).toBe(JSON.stringify(read.json.result.data));
    expect(order.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const outbox = await t.db.outboxMessage.findMany({ where: { aggregateId: order.id } });
    expect(outbox).toHaveLength(1);
    expect(outbox[0]).toMatchObject({
      status: "PENDING",
      topic: "payment.charge",
      payload: { orderId: order.id, amountCents: 7250, currency: "EUR" },
    });
    expect(outbox[0]!.idempotencyKey).toContain(key);

    const replay = await placeOrder(cart, key);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.json).toEqual(res.json);
    expect(await t.db.order.count({ where: { idempotencyKey: key } })).toBe(1);
  });

  it("refuses invalid input before reserving a key", async () => {
    const key = `bad-${randomUUID()}`;
    const mug = await productBySku("MUG-001");
    for (const items of [
      [],
      [{ productId: mug.id, quantity: 0 }],
      [{ productId: mug.id, quantity: 100 }],
      [{ productId: mug.id, quantity: 1, price: 1 }],
    ]) {
      const res = await placeOrder(items, key);
      expect(res.status).toBe(400);
    }
    expect(await t.db.idempotencyKey.count({ where: { key } })).toBe(0);
  });
});

describe("deterministic refusals are stored and replayed", () => {
  it("an unknown product is 404 product_not_found, replayed with the same status and body", async () => {
    const key = `unknown-${randomUUID()}`;
    const items = [{ productId: randomUUID(), quantity: 1 }];
    const first = await placeOrder(items, key);
    expectRefused(first, 404, "product_not_found");
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    await expectReplayedRefusal(first, items, key);
  });

  it("a cart in two currencies is 400 mixed_currencies: no order, no stock taken, replayed", async () => {
    const mug = await productBySku("MUG-001");
    const dollars = await newProduct({
      name: "Priced in dollars",
      priceCents: 1000,
      currency: "USD",
      stock: 5,
    });
    const key = `mixed-${randomUUID()}`;
    const items = [
      { productId: mug.id, quantity: 1 },
      { productId: dollars.id, quantity: 1 },
    ];
    const first = await placeOrder(items, key);
    expectRefused(first, 400, "mixed_currencies");
    expect(await t.db.order.count({ where: { tenantId: "acme", intentKey: key } })).toBe(0);
    expect((await productBySku("MUG-001")).stock).toBe(mug.stock);
    expect((await productBySku(dollars.sku)).stock).toBe(5);
    await expectReplayedRefusal(first, items, key);
  });

  it("not enough stock is 412 out_of_stock, rolls back every line and is replayed", async () => {
    const [lamp, mug] = await Promise.all([productBySku("LMP-010"), productBySku("MUG-001")]);
    const key = `oos-${randomUUID()}`;
    // The mug line comes first (or not: lines are sorted by id) and succeeds; the lamp line fails.
    const items = [
      { productId: mug.id, quantity: 1 },
      { productId: lamp.id, quantity: lamp.stock + 1 },
    ];
    const first = await placeOrder(items, key);
    expectRefused(first, 412, "out_of_stock");
    expect((await productBySku("MUG-001")).stock).toBe(mug.stock);
    expect((await productBySku("LMP-010")).stock).toBe(lamp.stock);
    await expectReplayedRefusal(first, items, key);
    expect(await t.db.order.count({ where: { idempotencyKey: key } })).toBe(0);
  });
});

describe("concurrency", () => {
  it("50 concurrent checkouts of the last 10 units: 10 orders, 40 out_of_stock, stock 0", async () => {
    const product = await newProduct({ name: "Last ten", priceCents: 999, stock: 10 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        placeOrder([{ productId: product.id, quantity: 1 }], `last-${i}-${randomUUID()}`),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 412)).toHaveLength(40);
    for (const a of answers.filter((a) => a.status === 412))
      expect(a.json.error.data.reason).toBe("out_of_stock");
    expect((await t.db.product.findUniqueOrThrow({ where: { id: product.id } })).stock).toBe(0);
    expect(await t.db.orderItem.count({ where: { productId: product.id } })).toBe(10);
    expect(await t.db.product.count({ where: { stock: { lt: 0 } } })).toBe(0);
  });

  it("a 20-way burst of one key gives one order, one outbox row and, once delivered, one charge", async () => {
    const sticker = await productBySku("STK-008");
    const key = `burst-${randomUUID()}`;
    const items = [{ productId: sticker.id, quantity: 2 }];
    const answers = await Promise.all(Array.from({ length: 20 }, () => placeOrder(items, key)));

    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    expect(ok.length + busy.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of busy) {
      expect(a.json.error.data.reason).toBe("request_in_progress");
      expect(Number(a.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    }
    const orderIds = new Set(ok.map((a) => a.json.result.data.order.id));
    expect(orderIds.size).toBe(1);
    const [orderId] = [...orderIds];

    expect(await t.db.order.count({ where: { idempotencyKey: key } })).toBe(1);
    expect(await t.db.outboxMessage.count({ where: { aggregateId: orderId } })).toBe(1);
    expect((await productBySku("STK-008")).stock).toBe(sticker.stock - 2);

    // Earlier tests left orders in the outbox too: run rounds until the worker finds nothing due.
    const worker = createOutboxWorker(t.db, { provider: provider.client });
    while ((await worker.runOnce()).claimed > 0);
    const outbox = await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: orderId } });
    expect(outbox.status).toBe("DELIVERED");
    expect((await provider.charges(orderId)).length).toBe(1);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
    });
  });
});
