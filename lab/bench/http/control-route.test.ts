// The bench's control (control-route.ts) is a mutation without idempotency that lives in the lab,
// not in the app: the front door serves it only when handed this module, and then it must answer
// as the checkout does (same auth, same errors, same order) while keeping no key. Both are asked
// through a real front door on a socket, as `npm run bench:http` asks them. The same module's
// least tRPC query (bare-trpc-route.ts) must answer catalog.list's bytes.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePreferWait } from "@once/idempotency/http";
import { useTestDatabase } from "../../../src/test/database";
import { TOKENS } from "../../../src/test/http";
import { testApp } from "../../../src/test/app";
import { createFrontDoor, type FrontDoorOptions } from "../../../src/server/edge/front-door";
import { labRoutes } from "./control-route";
import { CONTROL_PROCEDURE } from "./scenarios";
import { BARE_CATALOG_PATH } from "./bare-trpc-route";

const t = useTestDatabase({ poolMax: 4 });

const servers: http.Server[] = [];
let withLab: string;
let withoutLab: string;

async function door(direct: NonNullable<FrontDoorOptions["direct"]>): Promise<string> {
  const server = createFrontDoor({
    handle: async (_req, res) => void res.writeHead(404).end("next"),
    app: () => testApp(t.db),
    parsePreferWait,
    direct,
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  withLab = await door({ headers: {}, port: 0, lab: labRoutes });
  withoutLab = await door({ headers: {}, port: 0 });
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Answer {
  status: number;
  headers: Headers;
  json: {
    result?: { data: { order: Record<string, unknown> & { id: string } } };
    error?: { data: Record<string, unknown> };
  };
}

async function post(
  base: string,
  procedure: string,
  init: { token?: string; key?: string; body: unknown },
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.key) headers["idempotency-key"] = init.key;
  const res = await fetch(`${base}/api/trpc/${procedure}`, {
    method: "POST",
    headers,
    body: JSON.stringify(init.body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Answer["json"] };
}

const control = (init: Parameters<typeof post>[2]) => post(withLab, CONTROL_PROCEDURE, init);
const checkout = (init: Parameters<typeof post>[2]) => post(withLab, "checkout.placeOrder", init);

/** An answer with what differs between two orders by nature (ids, times, the path) blanked. */
function comparable(answer: Answer): unknown {
  return JSON.parse(
    JSON.stringify({ status: answer.status, json: answer.json }, (name, value: unknown) =>
      ["id", "createdAt", "path"].includes(name) ? "·" : value,
    ),
  );
}

const itemsOf = (productId: string, quantity = 1) => ({ items: [{ productId, quantity }] });

describe("the control, served by the front door from the lab", () => {
  it("is not the app's: a door without the lab module answers 404 and places nothing", async () => {
    const mug = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const orders = await t.db.order.count();
    const res = await post(withoutLab, CONTROL_PROCEDURE, {
      token: TOKENS.acme,
      key: randomUUID(),
      body: itemsOf(mug.id),
    });
    expect(res.status).toBe(404);
    expect(await t.db.order.count()).toBe(orders);
  });

  it("answers a placed order as the checkout does, and keeps no key", async () => {
    const mug = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const key = randomUUID();
    const keysBefore = await t.db.idempotencyKey.count();
    const byControl = await control({ token: TOKENS.acme, key, body: itemsOf(mug.id, 2) });
    const byCheckout = await checkout({
      token: TOKENS.acme,
      key: randomUUID(),
      body: itemsOf(mug.id, 2),
    });
    expect(byControl.status).toBe(200);
    expect(comparable(byControl)).toEqual(comparable(byCheckout));
    // The engine's header is the checkout's alone.
    expect(byCheckout.headers.get("idempotency-key-expires")).not.toBeNull();
    expect(byControl.headers.get("idempotency-key-expires")).toBeNull();

    const orderId = byControl.json.result!.data.order.id;
    const order = await t.db.order.findUniqueOrThrow({ where: { id: orderId } });
    expect(order).toMatchObject({
      tenantId: "acme",
      idempotencyKey: key,
      totalCents: 2 * mug.priceCents,
    });
    expect(await t.db.outboxMessage.count({ where: { aggregateId: orderId } })).toBe(1);
    expect((await t.db.product.findUniqueOrThrow({ where: { id: mug.id } })).stock).toBe(
      mug.stock - 4,
    );
    // The checkout kept its key; the control kept none.
    expect(await t.db.idempotencyKey.count()).toBe(keysBefore + 1);
    expect(await t.db.idempotencyKey.count({ where: { key } })).toBe(0);
  });
});

describe("the control's doors, as the checkout's", () => {
  it("refuses as the checkout does: no token, an operator's, out of stock, invalid input", async () => {
    const mug = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const lamp = await t.db.product.findUniqueOrThrow({ where: { sku: "LMP-010" } });
    const cases: { init: Parameters<typeof post>[2]; status: number }[] = [
      { init: { key: randomUUID(), body: itemsOf(mug.id) }, status: 401 },
      { init: { token: TOKENS.admin, key: randomUUID(), body: itemsOf(mug.id) }, status: 403 },
      { init: { token: TOKENS.acme, key: randomUUID(), body: itemsOf(lamp.id, 99) }, status: 412 },
      { init: { token: TOKENS.acme, key: randomUUID(), body: { items: [] } }, status: 400 },
    ];
    const orders = await t.db.order.count();
    for (const { init, status } of cases) {
      const byControl = await control(init);
      expect(byControl.status).toBe(status);
      expect(comparable(byControl)).toEqual(comparable(await checkout(init)));
    }
    expect(await t.db.order.count()).toBe(orders);
  });

  it("still needs a well-formed key, which its order carries", async () => {
    const mug = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
    const answer = await control({ token: TOKENS.acme, body: itemsOf(mug.id) });
    expect(answer.status).toBe(400);
    expect(answer.json.error?.data.reason).toBe("idempotency_key_missing");
  });
});

describe("the least tRPC query, served by the front door from the lab", () => {
  it("answers catalog.list's very bytes, and only with the lab module", async () => {
    const [bare, catalog, without] = await Promise.all(
      [
        `${withLab}${BARE_CATALOG_PATH}`,
        `${withLab}/api/trpc/catalog.list`,
        `${withoutLab}${BARE_CATALOG_PATH}`,
      ].map((url) => fetch(url)),
    );
    expect(bare!.status).toBe(200);
    expect(catalog!.status).toBe(200);
    const body = await bare!.text();
    expect(body).toBe(await catalog!.text());
    expect((JSON.parse(body) as { result: { data: unknown[] } }).result.data.length).toBe(
      await t.db.product.count(),
    );
    expect(without!.status).toBe(404);
  });
});
