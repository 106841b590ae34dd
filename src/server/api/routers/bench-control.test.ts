// The bench's control procedure is a mutation without idempotency: it must not exist unless the
// server was started for the bench (ONCE_BENCH_CONTROL=1) in demo mode, and when it exists it must
// do the checkout's business transaction and nothing of the engine's.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../../test/database";
import { TOKENS } from "../../../test/http";
import { loadConfig } from "../../config";
import { contextMaker } from "../context";
import { routerFor } from "../root";
import { testApp } from "../../../test/app";

const t = useTestDatabase({ poolMax: 4 });

async function postControl(
  benchControl: boolean,
  init: { token?: string; key: string; productId: string },
) {
  const headers = new Headers({ "content-type": "application/json", "idempotency-key": init.key });
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  const req = new Request("http://localhost/api/trpc/benchControl.placeOrder", {
    method: "POST",
    headers,
    body: JSON.stringify({ items: [{ productId: init.productId, quantity: 1 }] }),
  });
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: routerFor({ benchControl }),
    createContext: contextMaker(testApp(t.db)),
  });
  return {
    status: res.status,
    json: (await res.json()) as { result?: { data: { order: { id: string } } } },
  };
}

describe("configuration", () => {
  it("is off unless asked for", () => {
    expect(loadConfig({ DEMO_MODE: "1" }).benchControl).toBe(false);
    expect(loadConfig({ NODE_ENV: "production", DEMO_MODE: "1" }).benchControl).toBe(false);
  });
  it("is on when asked for in demo mode", () => {
    expect(
      loadConfig({ NODE_ENV: "production", DEMO_MODE: "1", ONCE_BENCH_CONTROL: "1" }).benchControl,
    ).toBe(true);
  });
  it("refuses to start when asked for outside demo mode", () => {
    expect(
      () => loadConfig({ NODE_ENV: "production", ONCE_BENCH_CONTROL: "1" }).benchControl,
    ).toThrow(/needs DEMO_MODE=1/);
    expect(() => loadConfig({ DEMO_MODE: "0", ONCE_BENCH_CONTROL: "1" }).benchControl).toThrow(
      /needs DEMO_MODE=1/,
    );
  });
});

describe("the procedure", () => {
  it("does not exist on the app's router", async () => {
    const product = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const answer = await postControl(false, {
      token: TOKENS.acme,
      key: randomUUID(),
      productId: product.id,
    });
    expect(answer.status).toBe(404);
    expect(await t.db.order.count()).toBe(0);
  });

  it("needs a tenant's token", async () => {
    const product = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    expect((await postControl(true, { key: randomUUID(), productId: product.id })).status).toBe(
      401,
    );
    expect(
      (await postControl(true, { token: TOKENS.admin, key: randomUUID(), productId: product.id }))
        .status,
    ).toBe(403);
  });

  it("places the order, its stock and its outbox row, and stores no key", async () => {
    const product = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const key = randomUUID();
    const answer = await postControl(true, { token: TOKENS.acme, key, productId: product.id });
    expect(answer.status).toBe(200);
    const orderId = answer.json.result!.data.order.id;
    const order = await t.db.order.findUniqueOrThrow({ where: { id: orderId } });
    expect(order).toMatchObject({
      tenantId: "acme",
      idempotencyKey: key,
      totalCents: product.priceCents,
    });
    expect(await t.db.outboxMessage.count({ where: { aggregateId: orderId } })).toBe(1);
    expect((await t.db.product.findUniqueOrThrow({ where: { id: product.id } })).stock).toBe(
      product.stock - 1,
    );
    expect(await t.db.idempotencyKey.count()).toBe(0);
  });
});
