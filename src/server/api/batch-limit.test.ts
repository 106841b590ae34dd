// The red team's batch: one 15 KB GET naming catalog.list 1 150 times ran 1 150 queries and
// answered 2 MB. Now a batch longer than MAX_BATCH_SIZE is refused, 400 batch_too_large in tRPC's
// shape, before any of its calls runs; a batch of the limit runs whole.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_BATCH_SIZE } from "@/shared/batch";
import { useTestDatabase } from "@/test/database";
import { testApp } from "@/test/app";
import { poolOf, type Db } from "../db/client";
import { serveTrpc } from "./handler";

const t = useTestDatabase({ poolMax: 4 });

/**
 * The test app with a client that counts every query its procedures run: through Prisma, and
 * straight on its pg pool (catalog.list reads there).
 */
function countingApp() {
  let queries = 0;
  const db = t.db.$extends({
    query: {
      $allModels: {
        $allOperations({ args, query }) {
          queries += 1;
          return query(args);
        },
      },
    },
  }) as unknown as Db;
  const onPool = vi.spyOn(poolOf(t.db)!, "query");
  return { app: { ...testApp(t.db), db }, queries: () => queries + onPool.mock.calls.length };
}

afterEach(() => {
  vi.restoreAllMocks();
});

const batchOf = (calls: number) =>
  new Request(
    `http://localhost/api/trpc/${Array(calls).fill("catalog.list").join(",")}?batch=1&input=${encodeURIComponent("{}")}`,
  );

describe("a tRPC batch over the limit", () => {
  it("1 150 × catalog.list in one GET is 400 batch_too_large, and no query runs", async () => {
    const { app, queries } = countingApp();
    const req = batchOf(1_150);
    expect(req.url.length).toBeGreaterThan(14_000); // the red team's 15 KB GET
    const res = await serveTrpc(req, app);
    expect(res.status).toBe(400);
    expect(res.headers.get("link")).toBe('</docs/errors#batch_too_large>; rel="describedby"');
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as unknown;
    // One error for the whole request, not one per call.
    expect(body).toMatchObject({
      error: {
        data: {
          code: "BAD_REQUEST",
          httpStatus: 400,
          reason: "batch_too_large",
          docs: "/docs/errors#batch_too_large",
        },
      },
    });
    expect(queries()).toBe(0);
  });

  it("one call over the limit is refused; the limit itself runs every call", async () => {
    const { app, queries } = countingApp();
    expect((await serveTrpc(batchOf(MAX_BATCH_SIZE + 1), app)).status).toBe(400);
    expect(queries()).toBe(0);
    const res = await serveTrpc(batchOf(MAX_BATCH_SIZE), app);
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(MAX_BATCH_SIZE);
    expect(queries()).toBe(MAX_BATCH_SIZE);
  });
});
