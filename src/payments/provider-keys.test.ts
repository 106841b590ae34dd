// Attacks on the shop through the provider by someone without the shop's secret key: another
// merchant of the same provider (a key of its own), or a caller with no key at all. Neither can
// charge for the shop's orders, list its charges, nor take the shop's provider idempotency key
// (`<tenant>:<checkout key>`, often guessable) before the shop's own charge.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { drainOutbox, placeOrder1900 } from "../test/payment-fixtures";
import { RIVAL_SHOP, useTestProvider } from "../test/provider";
import { waitFor } from "../../tools/process";
import { createProviderClient } from "./provider";

const t = useTestDatabase();
const provider = useTestProvider();
const rival = () => createProviderClient(provider.url, RIVAL_SHOP.secretKey);

/** A 19.00 EUR order placed through checkout, with the provider key its payment will be made under. */

describe("another merchant of the provider", () => {
  it("cannot pre-empt the shop's provider key: its 1-cent charge under that key is its own, and the shop's charge goes through", async () => {
    const order = await placeOrder1900(t.db);
    const forged = await rival().charge({
      idempotencyKey: order.providerKey,
      reference: order.orderId,
      amountCents: 1,
      currency: "EUR",
    });

    expect(await drainOutbox(t.db, provider.client)).toEqual({ delivered: 1, retried: 0, dead: 0 });
    const paid = await t.db.order.findUniqueOrThrow({ where: { id: order.orderId } });
    expect(paid).toMatchObject({ status: "PAID" });
    expect(paid.chargeId).not.toBe(forged.id);
    const books = await provider.sql<{ id: string; shop: string; amountCents: number }>(
      `SELECT id, shop_id AS shop, amount_cents AS "amountCents" FROM charges WHERE idempotency_key = $1 ORDER BY shop_id`,
      [order.providerKey],
    );
    expect(books).toEqual([
      { id: paid.chargeId, shop: "once", amountCents: 1900 },
      { id: forged.id, shop: RIVAL_SHOP.id, amountCents: 1 },
    ]);
    expect(await t.db.reconciliationFinding.count({ where: { orderId: order.orderId } })).toBe(0);
  });

  it("cannot pay the shop's order with a 1-cent charge: its event never reaches the shop's webhook", async () => {
    const delivered: { data: { chargeId: string; reference: string } }[] = [];
    const merchant = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        delivered.push(JSON.parse(Buffer.concat(chunks).toString()));
        res.writeHead(200).end();
      });
    });
    merchant.listen(0, "127.0.0.1");
    await once(merchant, "listening");
    try {
      const sender = await provider.withFaults({
        webhook: {
          url: `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/hook`,
          secret: "provider-keys-test-secret-0123456789",
        },
        duplicateRate: 0,
      });
      const target = await placeOrder1900(t.db);
      const forged = await createProviderClient(sender.url, RIVAL_SHOP.secretKey).charge({
        idempotencyKey: `forged-${target.orderId}`,
        reference: target.orderId,
        amountCents: 1,
        currency: "EUR",
      });
      // The barrier: a charge of the shop's own, made after the forged one, delivered. The forged
      // event is older, so it would have gone out first had it been the shop's.
      const own = await placeOrder1900(t.db);
      const charge = await sender.client.charge({
        idempotencyKey: own.providerKey,
        reference: own.orderId,
        amountCents: 1900,
        currency: "EUR",
      });
      await waitFor(
        "the shop's own event delivered",
        async () => (await provider.events(charge.id))[0]?.deliveredAt,
        30_000,
      );
      // (Earlier tests' events of the shop's go out too: only these two charges matter here.)
      const seen = delivered.map((e) => e.data.chargeId);
      expect(seen).toContain(charge.id);
      expect(seen).not.toContain(forged.id);
      expect(delivered.filter((e) => e.data.reference === target.orderId)).toEqual([]);
      expect(await provider.events(forged.id)).toEqual([
        expect.objectContaining({ deliveredAt: null, attempts: 0 }),
      ]);
      expect(await t.db.order.findUniqueOrThrow({ where: { id: target.orderId } })).toMatchObject({
        status: "PENDING",
        chargeId: null,
      });
    } finally {
      merchant.close();
    }
  });
});

describe("a caller without a key", () => {
  it("cannot charge the shop's order, not even 1 cent, nor take its provider key", async () => {
    const order = await placeOrder1900(t.db);
    const res = await fetch(new URL("/v1/charges", provider.url), {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": order.providerKey },
      body: JSON.stringify({ reference: order.orderId, amountCents: 1, currency: "EUR" }),
    });
    expect(res.status).toBe(401);
    expect(await provider.charges(order.orderId)).toEqual([]);

    expect((await drainOutbox(t.db, provider.client)).dead).toBe(0);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: order.orderId } })).toMatchObject({
      status: "PAID",
    });
    expect(await provider.charges(order.orderId)).toEqual([
      expect.objectContaining({ idempotencyKey: order.providerKey, amountCents: 1900 }),
    ]);
  });
});
