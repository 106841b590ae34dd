// A provider's refusal is its answer, and a charged customer is never told the payment failed:
// when the provider refuses the intent's key because it already holds a charge under it (the
// order was lost and placed again, or someone took the key first), the order takes that charge
// over if it is for the order's amount, else a finding names both; never a dead letter.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { drainOutbox, placeOrder1900, placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import {
  createProviderClient,
  ProviderRefusedError,
  ProviderUnavailableError,
  type PaymentProvider,
} from "./provider";

const t = useTestDatabase();
const provider = useTestProvider();

/** A 19.00 EUR order, placed through checkout; the worker has not run. */

const findingsOf = (orderId: string) =>
  t.db.reconciliationFinding.findMany({ where: { orderId }, orderBy: { createdAt: "asc" } });

describe("a key someone else used first", () => {
  it("a 1-cent charge made first under the shop's provider key leaves the order unpaid, with a finding and no dead letter", async () => {
    const order = await placeOrder1900(t.db);
    // The attacker guessed the shop's key (tenant and checkout key) and used it first.
    const forged = await provider.client.charge({
      idempotencyKey: order.providerKey,
      reference: order.orderId,
      amountCents: 1,
      currency: "EUR",
    });

    const said: { fields: object; message: string }[] = [];
    const keep = (fields: object, message: string) => said.push({ fields, message });
    const logger = { debug() {}, info: keep, warn: keep };
    expect(await drainOutbox(t.db, provider.client, {}, logger)).toEqual({
      delivered: 1,
      retried: 0,
      dead: 0,
    });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: order.orderId } })).toMatchObject({
      status: "PENDING",
      chargeId: null,
    });
    // The worker's finding is said in the one structured line every finding gets.
    expect(said.filter((l) => "finding" in l.fields)).toEqual([
      {
        fields: {
          finding: expect.objectContaining({ kind: "AMOUNT_MISMATCH", chargeIds: [forged.id] }),
          state: "new",
          source: "worker",
        },
        message: expect.stringMatching(
          /^\[reconciliation\] new finding AMOUNT_MISMATCH: .*\[worker\]$/,
        ),
      },
    ]);
    expect(
      await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: order.orderId } }),
    ).toMatchObject({
      status: "DELIVERED",
      attempts: 1,
      result: { chargeId: forged.id },
    });
    expect(await findingsOf(order.orderId)).toEqual([
      expect.objectContaining({ kind: "AMOUNT_MISMATCH", chargeIds: [forged.id] }),
    ]);
    expect(
      await provider.sql(`SELECT 1 FROM charges WHERE reference = $1`, [order.orderId]),
    ).toHaveLength(1);
  });
});

describe("a provider's refusal is its answer", () => {
  it("is recorded at once with its reason, not retried", async () => {
    const order = await placeOrder1900(t.db);
    let calls = 0;
    const refusing: PaymentProvider = {
      ...provider.client,
      charge: async () => {
        calls++;
        throw new ProviderRefusedError(400, "invalid_request_error", "currency not supported");
      },
    };
    expect(await drainOutbox(t.db, refusing)).toEqual({ delivered: 0, retried: 0, dead: 1 });
    expect(calls).toBe(1);
    expect(
      await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: order.orderId } }),
    ).toMatchObject({
      status: "DEAD",
      attempts: 1,
      lastError: expect.stringContaining("currency not supported"),
    });
  });
});

describe("a lost order's intent placed again", () => {
  it("takes over the charge the provider holds under the intent's key: one charge, the order paid, no dead letter", async () => {
    const first = await placeOrder1900(t.db);
    await drainOutbox(t.db, provider.client);
    const paid = await t.db.order.findUniqueOrThrow({ where: { id: first.orderId } });
    expect(paid.status).toBe("PAID");

    // A restore loses the order, its outbox row and the checkout key's record; the customer
    // places the same intent again with the same key.
    await t.db.$executeRaw`DELETE FROM "OutboxMessage" WHERE "aggregateId" = ${first.orderId}`;
    await t.db.$executeRaw`DELETE FROM "Order" WHERE "id" = ${first.orderId}::uuid`;
    await t.db
      .$executeRaw`DELETE FROM "IdempotencyKey" WHERE "scope" = 'acme' AND "key" = ${first.key}`;
    const again = await placeTestOrder(t.db, { sku: "BAG-003", key: first.key });
    expect(again.orderId).not.toBe(first.orderId);

    expect(await drainOutbox(t.db, provider.client)).toEqual({ delivered: 1, retried: 0, dead: 0 });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: again.orderId } })).toMatchObject({
      status: "PAID",
      chargeId: paid.chargeId,
    });
    expect(
      await provider.sql(`SELECT id FROM charges WHERE idempotency_key = $1 OR reference = $2`, [
        first.providerKey,
        again.orderId,
      ]),
    ).toEqual([{ id: paid.chargeId }]);
    expect(
      await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: again.orderId } }),
    ).toMatchObject({ status: "DELIVERED", attempts: 1, result: { chargeId: paid.chargeId } });
    expect(await findingsOf(again.orderId)).toEqual([]);
  });
});

describe("the provider client", () => {
  it("reads 408, 409, 429 and 5xx as not now, any other 4xx as a refusal with the provider's reason", async () => {
    let status = 0;
    const server = http.createServer((_req, res) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "idempotency_error", message: "key reused" } }));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const client = createProviderClient(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      provider.secretKey,
    );
    const request = { idempotencyKey: "k", reference: "r", amountCents: 1, currency: "EUR" };
    try {
      for (status of [408, 409, 429, 500, 503])
        await expect(client.charge(request)).rejects.toBeInstanceOf(ProviderUnavailableError);
      for (status of [400, 402, 404, 422]) {
        const refusal = await client.charge(request).catch((e: unknown) => e);
        expect(refusal).toBeInstanceOf(ProviderRefusedError);
        expect(refusal).toMatchObject({ status, type: "idempotency_error", reason: "key reused" });
      }
    } finally {
      server.close();
      await once(server, "close");
    }
  });
});
