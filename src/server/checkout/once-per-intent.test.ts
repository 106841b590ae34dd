// Once beyond the key: the intent's order survives its key's record. After an operator's bust,
// after the key's retention, or when two executions of one intent race, a retry answers with the
// first order: no second order, no stock taken twice, no second outbox row, and at the provider one
// charge.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminCalls, callTrpc, TOKENS, type HttpAnswer } from "../../test/http";
import { useTestDatabase } from "../../test/database";
import { createOutboxWorker } from "@/payments";
import { useTestProvider } from "../../test/provider";
import { waitFor } from "../../../tools/process";
import { placeOrder as placeOrderInTx } from "./place-order";

const t = useTestDatabase({ poolMax: 12 });
const provider = useTestProvider();

function placeOrder(items: unknown, key: string): Promise<HttpAnswer<any>> {
  return callTrpc(t.db, {
    path: "checkout.placeOrder",
    input: { items },
    token: TOKENS.acme,
    key,
    method: "POST",
  });
}

const stockOf = async (sku: string) =>
  (await t.db.product.findUniqueOrThrow({ where: { sku } })).stock;

/** The operator's bust, through the real admin endpoint (audited, its own idempotency key). */
async function bust(checkoutKey: string) {
  const row = await t.db.idempotencyKey.findFirstOrThrow({
    where: { scope: "acme", key: checkoutKey },
  });
  const res = await adminCalls(() => t.db).mutate("admin.keys.bust", {
    id: row.id,
    reason: "customer says it failed",
  });
  expect(res.status).toBe(200);
  expect(await t.db.idempotencyKey.count({ where: { scope: "acme", key: checkoutKey } })).toBe(0);
}

async function drainOutbox() {
  const worker = createOutboxWorker(t.db, { provider: provider.client });
  while ((await worker.runOnce()).claimed > 0);
}

/** Everything the intent's key has caused: orders, outbox rows, charges at the provider. */
async function effectsOf(key: string) {
  const orders = await t.db.order.findMany({
    where: { tenantId: "acme", idempotencyKey: key },
    select: { id: true },
  });
  const ids = orders.map((o) => o.id);
  return {
    orders: ids.length,
    outbox: await t.db.outboxMessage.count({ where: { aggregateId: { in: ids } } }),
    charges: (await provider.sql(`SELECT id FROM charges WHERE reference = ANY($1::text[])`, [ids]))
      .length,
  };
}

const productBySku = (sku: string) => t.db.product.findUniqueOrThrow({ where: { sku } });
/** A first order of `quantity` of `sku`, under a fresh key: placed (200). */
async function firstOrder(sku: string, quantity: number, label: string) {
  const product = await productBySku(sku);
  const key = `${label}-${randomUUID()}`;
  const items = [{ productId: product.id, quantity }];
  const first = await placeOrder(items, key);
  expect(first.status).toBe(200);
  return { product, key, items, first };
}

const keyOf = (key: string) =>
  t.db.idempotencyKey.findFirstOrThrow({ where: { scope: "acme", key } });

describe("a retry after the operator busted a completed key", () => {
  it("answers with the same order, takes no stock, writes no outbox row; the provider charges once", async () => {
    const { product: mug, key, items, first } = await firstOrder("MUG-001", 2, "bust");
    await drainOutbox(); // the first order is paid before the bust, as in the attack

    await bust(key);
    const retry = await placeOrder(items, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull(); // it ran again…
    expect(retry.json.result.data.order.id).toBe(first.json.result.data.order.id); // …about the same order
    expect(retry.json.result.data.order.status).toBe("PAID");
    await drainOutbox();

    expect(await effectsOf(key)).toEqual({ orders: 1, outbox: 1, charges: 1 });
    expect(await stockOf("MUG-001")).toBe(mug.stock - 2);
    // The key holds the new answer, replayed from now on.
    expect(await keyOf(key)).toMatchObject({ status: "COMPLETED", responseStatus: 200 });
  });

  it("with other lines under the busted key is 422 idempotency_key_reused, stored, and changes nothing", async () => {
    const tee = await productBySku("TEE-002");
    const key = `bust-other-${randomUUID()}`;
    expect((await placeOrder([{ productId: tee.id, quantity: 1 }], key)).status).toBe(200);
    await bust(key);

    const other = await placeOrder([{ productId: tee.id, quantity: 3 }], key);
    expect(other.status).toBe(422);
    expect(other.json.error.data.reason).toBe("idempotency_key_reused");
    expect(await effectsOf(key)).toMatchObject({ orders: 1, outbox: 1 });
    expect(await stockOf("TEE-002")).toBe(tee.stock - 1);
    expect(await keyOf(key)).toMatchObject({ status: "FAILED", responseStatus: 422 });
  });
});

describe("a retry after the key's retention ended", () => {
  it("answers with the same order", async () => {
    const { product: sticker, key, items, first } = await firstOrder("STK-008", 1, "expired");
    await t.db
      .$executeRaw`UPDATE "IdempotencyKey" SET "expiresAt" = now() - interval '1 second' WHERE "scope" = 'acme' AND "key" = ${key}`;

    const retry = await placeOrder(items, key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
    expect(retry.json.result.data.order.id).toBe(first.json.result.data.order.id);
    await drainOutbox();
    expect(await effectsOf(key)).toEqual({ orders: 1, outbox: 1, charges: 1 });
    expect(await stockOf("STK-008")).toBe(sticker.stock - 1);
  });
});

describe("two executions of one intent at once", () => {
  it("the second waits on the intent's unique index and answers with the first's order, without a failed statement", async () => {
    const lamp = await productBySku("LMP-010");
    const user = await t.db.user.findFirstOrThrow({ where: { tenantId: "acme" } });
    const command = {
      tenantId: "acme",
      userId: user.id,
      idempotencyKey: `race-${randomUUID()}`,
      items: [{ productId: lamp.id, quantity: 1 }],
    };

    let placed!: (id: string) => void;
    const firstPlaced = new Promise<string>((resolve) => (placed = resolve));
    let commit!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commit = resolve));
    const first = t.db.$transaction(async (tx) => {
      const order = await placeOrderInTx(tx, command);
      placed(order.id);
      await mayCommit; // holds the intent's index entry (and the stock row) uncommitted
      return order;
    });
    const firstId = await firstPlaced;
    const second = t.db.$transaction((tx) => placeOrderInTx(tx, command));
    await waitFor("the second execution to wait for the first", async () => {
      const rows = await t.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "wait_event_type" = 'Lock'`;
      return rows[0]!.n > 0;
    });
    commit();

    // Both transactions commit: a failed statement would have aborted the second one.
    const [a, b] = await Promise.all([first, second]);
    expect(a.id).toBe(firstId);
    expect(b.id).toBe(firstId);
    expect(b.items).toEqual(a.items);
    expect(await effectsOf(command.idempotencyKey)).toMatchObject({ orders: 1, outbox: 1 });
    expect(await stockOf("LMP-010")).toBe(lamp.stock - 1);
  });
});
