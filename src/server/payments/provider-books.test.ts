// The provider's books in a database of their own (PROVIDER_DATABASE_URL): the charge, its
// idempotency record and its event are written there and nowhere in the shop's database, and the
// event still pays the order (the webhook looks the event up in the books). A failover of the
// shop's cluster then cannot erase what the provider charged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, useTestDatabase, type TestDatabase } from "../../test/database";
import { placeTestOrder } from "../../test/payment-fixtures";
import { createEventDispatcher } from "./event-dispatcher";
import { testApp } from "../../test/app";
import { configuredEventSink, configuredProvider, type PaymentDeps } from "./index";
import { createOutboxWorker } from "./outbox-worker";

const shop = useTestDatabase();
let books: TestDatabase & { drop: () => Promise<void> };

/** The payment jobs' parts on the test's shop database, with `books` as the provider's books. */
function payments(booksDb = books.db): PaymentDeps {
  const app = testApp(shop.db);
  return { ...app.payments, books: booksDb };
}

beforeAll(async () => {
  books = await createTestDatabase({ poolMax: 2 });
});
afterAll(async () => books?.drop());

describe("the provider's own books", () => {
  it("charge and event go to the books only, the event is delivered from them, and the order is paid", async () => {
    const { orderId, totalCents } = await placeTestOrder(shop.db);
    const worker = createOutboxWorker(shop.db, { provider: configuredProvider(payments()) });
    expect((await worker.runOnce()).delivered).toBe(1);

    const charges = await books.db.providerCharge.findMany({ where: { reference: orderId } });
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({ amountCents: totalCents, status: "SUCCEEDED" });
    expect(await shop.db.providerCharge.count({ where: { reference: orderId } })).toBe(0);
    expect(await shop.db.providerEvent.count({ where: { chargeId: charges[0]!.id } })).toBe(0);

    const dispatcher = createEventDispatcher(books.db, { deliver: configuredEventSink(payments()), duplicateRate: 0 });
    expect((await dispatcher.runOnce()).delivered).toBe(1);
    expect(await shop.db.order.findUniqueOrThrow({ where: { id: orderId }, select: { status: true } })).toEqual({ status: "PAID" });
  });

  it("control: the shop's database as the books (the default) does not know an event kept elsewhere", async () => {
    const { orderId } = await placeTestOrder(shop.db);
    const worker = createOutboxWorker(shop.db, { provider: configuredProvider(payments()) });
    await worker.runOnce();
    const charge = await books.db.providerCharge.findFirstOrThrow({ where: { reference: orderId } });
    const event = await books.db.providerEvent.findFirstOrThrow({ where: { chargeId: charge.id } });
    const body = { id: event.id, type: event.type, data: event.payload } as Parameters<ReturnType<typeof configuredEventSink>>[0];
    expect(await configuredEventSink(payments(shop.db))(body)).toBe(404);
    expect(await configuredEventSink(payments())(body)).toBe(200);
  });
});
