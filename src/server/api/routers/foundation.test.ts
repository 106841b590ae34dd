// The foundation's HTTP contract, through the real tRPC fetch handler: who may call what (401, 403,
// tenant isolation as 404), and that bad input is a clear 400 carrying the zod issue, never a 500.
// Orders are written straight into the database with literal timestamps.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../../test/database";
import { callTrpc, TOKENS } from "../../../test/http";
import { SESSION_COOKIE } from "../../auth/session";
import { sessionCookieFor } from "@/test/sessions";
import { createDb, poolOf, type Db } from "../../db/client";
import { listCatalog, productSelect } from "./catalog";
import { freePort } from "../../../../tools/process";
import { contextMaker } from "../context";
import { appRouter } from "../root";
import { testApp } from "../../../test/app";

const t = useTestDatabase({ poolMax: 4 });

interface TrpcError {
  error: {
    message: string;
    code: number;
    data: {
      code: string;
      httpStatus: number;
      path?: string;
      reason?: string;
      zodError?: { formErrors: string[]; fieldErrors: Record<string, string[]> };
    };
  };
}

/** A request exactly as given (for malformed JSON, which callTrpc cannot send). */
async function rawTrpc(
  db: Db,
  path: string,
  init: { method: "GET" | "POST"; query?: string; body?: string; headers?: Record<string, string> },
) {
  const url = `http://localhost/api/trpc/${path}${init.query === undefined ? "" : `?input=${encodeURIComponent(init.query)}`}`;
  const req = new Request(url, {
    method: init.method,
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body,
  });
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: contextMaker(testApp(db)),
  });
  return { status: res.status, json: (await res.json()) as TrpcError };
}

const orders = { acme: [] as string[], globex: [] as string[] };

beforeAll(async () => {
  const product = await t.db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
  const users = {
    acme: await t.db.user.findUniqueOrThrow({ where: { email: "acme@example.com" } }),
    globex: await t.db.user.findUniqueOrThrow({ where: { email: "globex@example.com" } }),
  };
  // acme: three orders on consecutive days (oldest first); globex: one.
  const plan = [
    { tenant: "acme", day: 1 },
    { tenant: "acme", day: 2 },
    { tenant: "acme", day: 3 },
    { tenant: "globex", day: 2 },
  ] as const;
  for (const { tenant, day } of plan) {
    const order = await t.db.order.create({
      data: {
        tenantId: tenant,
        userId: users[tenant].id,
        status: "PENDING",
        totalCents: 2 * product.priceCents,
        currency: "EUR",
        idempotencyKey: `seed-${tenant}-${day}`,
        createdAt: new Date(`2026-11-0${day}T10:00:00.000Z`),
        items: {
          create: [
            {
              productId: product.id,
              sku: product.sku,
              name: product.name,
              unitPriceCents: product.priceCents,
              quantity: 2,
              lineTotalCents: 2 * product.priceCents,
            },
          ],
        },
      },
    });
    orders[tenant].push(order.id);
  }
});

describe("catalog.list (public)", () => {
  it("lists the catalog without credentials, by sku, with only the public columns", async () => {
    const res = await callTrpc(t.db, { path: "catalog.list", method: "GET" });
    expect(res.status).toBe(200);
    const products = res.json.result.data as Record<string, unknown>[];
    expect(products).toHaveLength(10);
    expect(products.map((p) => p.sku)).toEqual([...products.map((p) => p.sku)].sort());
    expect(Object.keys(products[0]!).sort()).toEqual([
      "currency",
      "description",
      "id",
      "name",
      "priceCents",
      "sku",
      "stock",
    ]);
    expect(products[0]).toMatchObject({ sku: "BAG-003", priceCents: 1900, currency: "EUR" });
  });

  it("reads on the pg pool exactly what Prisma's findMany reads: columns, types, order", async () => {
    expect(poolOf(t.db)).toBeDefined();
    const byPrisma = await t.db.product.findMany({
      select: productSelect,
      orderBy: { sku: "asc" },
    });
    expect(JSON.stringify(await listCatalog(t.db))).toBe(JSON.stringify(byPrisma));
  });

  it("is a query: POST is 405, not a 500", async () => {
    const res = await callTrpc<TrpcError>(t.db, { path: "catalog.list", method: "POST" });
    expect(res.status).toBe(405);
    expect(res.json.error.data.code).toBe("METHOD_NOT_SUPPORTED");
  });
});

describe("orders (tenant)", () => {
  it("acme's token lists acme's orders only, newest first, with their lines", async () => {
    const res = await callTrpc(t.db, { path: "orders.list", method: "GET", token: TOKENS.acme });
    expect(res.status).toBe(200);
    const { items, nextCursor } = res.json.result.data;
    expect(items.map((o: { id: string }) => o.id)).toEqual([...orders.acme].reverse());
    expect(nextCursor).toBeNull();
    expect(items[0]).toEqual({
      id: orders.acme[2],
      status: "PENDING",
      totalCents: 2900,
      currency: "EUR",
      chargeId: null,
      createdAt: "2026-11-03T10:00:00.000Z",
      items: [
        {
          productId: expect.any(String),
          sku: "MUG-001",
          name: "Enamel mug",
          unitPriceCents: 1450,
          quantity: 2,
          lineTotalCents: 2900,
        },
      ],
    });
  });

  it("pages with a cursor", async () => {
    const first = await callTrpc(t.db, {
      path: "orders.list",
      method: "GET",
      token: TOKENS.acme,
      input: { limit: 2 },
    });
    expect(first.json.result.data.items.map((o: { id: string }) => o.id)).toEqual([
      orders.acme[2],
      orders.acme[1],
    ]);
    expect(first.json.result.data.nextCursor).toBe(orders.acme[1]);
    const second = await callTrpc(t.db, {
      path: "orders.list",
      method: "GET",
      token: TOKENS.acme,
      input: { limit: 2, cursor: orders.acme[1] },
    });
    expect(second.json.result.data).toEqual({
      items: [expect.objectContaining({ id: orders.acme[0] })],
      nextCursor: null,
    });
  });

  it("a cursor that is not the caller's order (another tenant's, or unknown) is 400 invalid_cursor, the same answer for both", async () => {
    // globex's order of day 2 as acme's cursor used to answer acme's day-1 order: globex's exists,
    // and is newer.
    const list = (cursor: string) =>
      callTrpc<TrpcError>(t.db, {
        path: "orders.list",
        method: "GET",
        token: TOKENS.acme,
        input: { limit: 2, cursor },
      });
    const foreign = await list(orders.globex[0]!);
    const unknown = await list(randomUUID());
    for (const res of [foreign, unknown]) {
      expect(res.status).toBe(400);
      expect(res.json.error.data).toMatchObject({ code: "BAD_REQUEST", reason: "invalid_cursor" });
      expect(res.headers.get("link")).toBe('</docs/errors#invalid_cursor>; rel="describedby"');
    }
    expect(foreign.json).toEqual(unknown.json);
  });

  it("globex's token lists globex's order only", async () => {
    const res = await callTrpc(t.db, { path: "orders.list", method: "GET", token: TOKENS.globex });
    expect(res.json.result.data.items.map((o: { id: string }) => o.id)).toEqual(orders.globex);
  });

  it("orders.byId: a tenant's own order is 200; another tenant's is 404, like a missing one", async () => {
    const own = await callTrpc(t.db, {
      path: "orders.byId",
      method: "GET",
      token: TOKENS.acme,
      input: { id: orders.acme[0] },
    });
    expect(own.status).toBe(200);
    expect(own.json.result.data.id).toBe(orders.acme[0]);

    const foreign = await callTrpc<TrpcError>(t.db, {
      path: "orders.byId",
      method: "GET",
      token: TOKENS.globex,
      input: { id: orders.acme[0] },
    });
    const missing = await callTrpc<TrpcError>(t.db, {
      path: "orders.byId",
      method: "GET",
      token: TOKENS.globex,
      input: { id: randomUUID() },
    });
    for (const res of [foreign, missing]) {
      expect(res.status).toBe(404);
      expect(res.json.error.data).toMatchObject({
        code: "NOT_FOUND",
        httpStatus: 404,
        reason: "order_not_found",
      });
      expect(res.json.error.message).toBe("No order with this id belongs to your account");
    }
  });

  it("a session cookie works like a token", async () => {
    const acme = await t.db.user.findUniqueOrThrow({ where: { email: "acme@example.com" } });
    const res = await callTrpc(t.db, {
      path: "orders.list",
      method: "GET",
      headers: { cookie: await sessionCookieFor(t.db, acme.id) },
    });
    expect(res.status).toBe(200);
    expect(res.json.result.data.items).toHaveLength(3);
  });
});

describe("authentication and roles", () => {
  it.each([
    ["no credentials", {}],
    ["an unknown token", { token: "nobody_demo_token" }],
    ["another scheme", { headers: { authorization: "Basic YWNtZTpwdw==" } }],
    ["a made-up session cookie", { headers: { cookie: `${SESSION_COOKIE}=${"A".repeat(43)}` } }],
  ])("%s is 401 on tenant procedures", async (_, credentials) => {
    for (const [path, input] of [
      ["orders.list", undefined],
      ["orders.byId", { id: randomUUID() }],
    ] as const) {
      const res = await callTrpc<TrpcError>(t.db, { path, method: "GET", input, ...credentials });
      expect(res.status, path).toBe(401);
      expect(res.json.error.data.code).toBe("UNAUTHORIZED");
    }
  });

  it("the admin is 403 on tenant procedures (the admin acts for no tenant)", async () => {
    const res = await callTrpc<TrpcError>(t.db, {
      path: "orders.list",
      method: "GET",
      token: TOKENS.admin,
    });
    expect(res.status).toBe(403);
    expect(res.json.error.data.code).toBe("FORBIDDEN");
  });

  it("a tenant token on admin procedures is 403; no token is 401; the admin's is 200", async () => {
    for (const [path, input] of [
      ["admin.stats", undefined],
      ["admin.keys.list", {}],
      ["admin.audit.list", {}],
    ] as const) {
      const tenant = await callTrpc<TrpcError>(t.db, {
        path,
        method: "GET",
        input,
        token: TOKENS.acme,
      });
      expect(tenant.status, path).toBe(403);
      expect(tenant.json.error.data.code).toBe("FORBIDDEN");
      expect(
        (await callTrpc(t.db, { path, method: "GET", input, token: TOKENS.globex })).status,
        path,
      ).toBe(403);
      expect((await callTrpc(t.db, { path, method: "GET", input })).status, path).toBe(401);
      expect(
        (await callTrpc(t.db, { path, method: "GET", input, token: TOKENS.admin })).status,
        path,
      ).toBe(200);
    }
  });

  it("session.me says who is calling, and null for nobody", async () => {
    expect(
      (await callTrpc(t.db, { path: "session.me", method: "GET" })).json.result.data,
    ).toBeNull();
    expect(
      (await callTrpc(t.db, { path: "session.me", method: "GET", token: TOKENS.acme })).json.result
        .data,
    ).toEqual({
      name: "Acme buyer",
      email: "acme@example.com",
      role: "TENANT",
      tenantId: "acme",
    });
  });

  it("a database that cannot be reached is 503 store_unavailable, for a token and a cookie alike", async () => {
    const down = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`, {
      max: 1,
    });
    const acme = await t.db.user.findUniqueOrThrow({ where: { email: "acme@example.com" } });
    try {
      for (const credentials of [
        { token: TOKENS.acme },
        { headers: { cookie: await sessionCookieFor(t.db, acme.id) } },
      ]) {
        const res = await callTrpc<TrpcError>(down, {
          path: "orders.list",
          method: "GET",
          ...credentials,
        });
        expect(res.status).toBe(503);
        expect(res.json.error.data.reason).toBe("store_unavailable");
      }
    } finally {
      await down.$disconnect();
    }
  });
});

describe("bad input is a 400 with the zod issue, never a 500", () => {
  async function expectZod400(path: string, input: unknown, field: string | null, message: RegExp) {
    const res = await callTrpc<TrpcError>(t.db, { path, method: "GET", token: TOKENS.acme, input });
    expect(res.status, JSON.stringify(input)).toBe(400);
    expect(res.json.error.data).toMatchObject({
      code: "BAD_REQUEST",
      httpStatus: 400,
      reason: "invalid_input",
    });
    const zod = res.json.error.data.zodError!;
    const issues = field === null ? zod.formErrors : zod.fieldErrors[field];
    expect(issues?.join(" "), JSON.stringify(zod)).toMatch(message);
  }

  it.each([
    ["a wrong type", { limit: "ten" }, "limit", /expected number, received string/i],
    ["a fraction", { limit: 1.5 }, "limit", /expected int/i],
    ["too small", { limit: 0 }, "limit", />=1/],
    ["too large", { limit: 101 }, "limit", /<=100/],
    ["an invalid uuid", { cursor: "not-a-uuid" }, "cursor", /invalid uuid/i],
    [
      "an unknown key on a strict input",
      { limit: 5, tenantId: "globex" },
      null,
      /unrecognized key.*tenantId/i,
    ],
    ["not an object", "all", null, /expected object, received string/i],
  ])("orders.list: %s", (_, input, field, message) =>
    expectZod400("orders.list", input, field, message),
  );

  it.each([
    ["a missing id", {}, "id", /expected string, received undefined/i],
    ["an invalid uuid", { id: "42" }, "id", /invalid uuid/i],
    ["a number", { id: 42 }, "id", /expected string, received number/i],
    [
      "an unknown key on a strict input",
      { id: randomUUID(), tenantId: "acme" },
      null,
      /unrecognized key.*tenantId/i,
    ],
    ["no input at all", undefined, null, /expected object, received undefined/i],
  ])("orders.byId: %s", (_, input, field, message) =>
    expectZod400("orders.byId", input, field, message),
  );

  it("malformed JSON is a 400 naming the JSON error, on a query and on a mutation", async () => {
    const query = await rawTrpc(t.db, "orders.list", {
      method: "GET",
      query: "{limit:",
      headers: { authorization: `Bearer ${TOKENS.acme}` },
    });
    expect(query.status).toBe(400);
    expect(query.json.error.data.code).toBe("BAD_REQUEST");
    expect(query.json.error.message).toMatch(/JSON/);
    const mutation = await rawTrpc(t.db, "checkout.placeOrder", {
      method: "POST",
      body: '{"items": [',
      headers: { authorization: `Bearer ${TOKENS.acme}`, "idempotency-key": "k1" },
    });
    expect(mutation.status).toBe(400);
    expect(mutation.json.error.data.code).toBe("BAD_REQUEST");
    expect(mutation.json.error.message).toMatch(/JSON/);
  });

  // Every procedure the app serves, found in the router itself, so a new one is covered the day
  // it is added: garbage JSON and a wrong-typed input are 400 for each, and nothing is recorded.
  const procedures = Object.entries(
    (
      appRouter as unknown as {
        _def: { procedures: Record<string, { _def: { type: string; inputs: unknown[] } }> };
      }
    )._def.procedures,
  );

  it("covers every procedure of the app router", () => {
    expect(procedures.map(([path]) => path)).toEqual(
      expect.arrayContaining([
        "catalog.list",
        "orders.list",
        "orders.byId",
        "session.me",
        "checkout.placeOrder",
      ]),
    );
  });

  it.each(procedures.map(([path, p]) => [path, p._def.type, p._def.inputs.length > 0] as const))(
    "%s (%s)",
    async (path, type, hasInput) => {
      const method = type === "mutation" ? "POST" : "GET";
      const headers = {
        authorization: `Bearer ${path.startsWith("admin.") ? TOKENS.admin : TOKENS.acme}`,
        "idempotency-key": `bad-input-${randomUUID()}`,
      };
      const keysBefore = await t.db.idempotencyKey.count();

      const garbage = await rawTrpc(
        t.db,
        path,
        method === "GET"
          ? { method, query: "{not json", headers }
          : { method, body: "{not json", headers },
      );
      if (hasInput) {
        expect(garbage.status).toBe(400);
        expect(garbage.json.error.data.code).toBe("BAD_REQUEST");
        expect(garbage.json.error.message).toMatch(/JSON/);
      } else {
        // No input to parse: the garbage is ignored, never a crash.
        expect(garbage.status).not.toBe(500);
      }

      if (hasInput) {
        const wrong = await rawTrpc(
          t.db,
          path,
          method === "GET" ? { method, query: "42", headers } : { method, body: "42", headers },
        );
        expect(wrong.status).toBe(400);
        expect(wrong.json.error.data).toMatchObject({
          code: "BAD_REQUEST",
          reason: "invalid_input",
        });
        expect(wrong.json.error.data.zodError?.formErrors.join(" ")).toMatch(
          /expected object, received number/i,
        );
      }
      // Invalid input is refused before any idempotency key is reserved.
      expect(await t.db.idempotencyKey.count()).toBe(keysBefore);
    },
  );
});
