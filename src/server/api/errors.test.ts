// Every error answer says why (error.data.reason, from the shared table) and where that is
// explained (error.data.docs and a Link: rel="describedby" header), including the ones that come
// before any procedure runs (auth, unknown path) and a database that is gone.
import { describe, expect, it } from "vitest";
import { createDb } from "@/server/db/client";
import { freePort } from "../../../tools/process";
import { REASON_INFO } from "@/shared/reasons";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";

const t = useTestDatabase({ poolMax: 4 });

type ErrorBody = {
  error: { message: string; data: { reason: string; docs: string; httpStatus: number } };
};

function expectExplained(
  res: { status: number; headers: Headers; json: ErrorBody },
  status: number,
  reason: string,
) {
  expect(res.status).toBe(status);
  expect(res.json.error.data).toMatchObject({
    reason,
    docs: `/docs/errors#${reason}`,
    httpStatus: status,
  });
  expect(res.headers.get("link")).toBe(`</docs/errors#${reason}>; rel="describedby"`);
  expect(REASON_INFO[reason as keyof typeof REASON_INFO].status).toBe(status);
}

describe("every error is explained", () => {
  it.each([
    ["401 unauthorized: no token", "orders.list", undefined, 401, "unauthorized"],
    ["401 unauthorized: a wrong token", "orders.list", "nope", 401, "unauthorized"],
    ["403 forbidden: a tenant on an admin procedure", "admin.stats", TOKENS.acme, 403, "forbidden"],
    ["404 not_found: no such procedure", "nothing.here", undefined, 404, "not_found"],
  ] as const)("%s", async (_, path, token, status, reason) => {
    expectExplained(
      await callTrpc<ErrorBody>(t.db, { path, method: "GET", token }),
      status,
      reason,
    );
  });

  it("400 invalid_input: input the schema refuses", async () => {
    const res = await callTrpc<ErrorBody>(t.db, {
      path: "checkout.placeOrder",
      input: { items: [] },
      token: TOKENS.acme,
      method: "POST",
    });
    // invalid input is refused before the key is looked at
    expectExplained(res, 400, "invalid_input");
  });

  it("503 store_unavailable for a query too, with Retry-After, while the database is gone", async () => {
    const down = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`, {
      max: 1,
    });
    try {
      const res = await callTrpc<ErrorBody>(down, { path: "catalog.list", method: "GET" });
      expectExplained(res, 503, "store_unavailable");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(res.json.error.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|prisma/i);
    } finally {
      await down.$disconnect();
    }
  });
});
