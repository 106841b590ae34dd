// The one tRPC internal the middleware relies on: a replay has no next() result to pass on, so it
// builds the result tRPC's own resolver returns (`{ marker: middlewareMarker, ok, data, ctx }`,
// from
// @trpc/server/unstable-core-do-not-import). The peer range pins the versions checked; this test
// fails if tRPC changes that shape. It also pins the typing: `.use(idempotency)` types ctx.tx.
import { randomUUID } from "node:crypto";
import { initTRPC } from "@trpc/server";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createIdempotencyMiddleware, type HttpAccess } from "../src/entry/trpc";
import { useTestDatabase, type Db } from "./support/database";
import { engineFor, postToRouter, type Tx } from "./support/harness";

const t = useTestDatabase();

interface Context {
  db: Db;
  http: HttpAccess;
}

const trpc = initTRPC.context<Context>().create();
const seen: Record<string, unknown>[] = [];
/**
 * Records what the rest of the chain returned to it: tRPC's resolver, or the idempotency
 * middleware.
 */
const spy = trpc.middleware(async function spy({ next }) {
  const result = await next();
  seen.push(result as unknown as Record<string, unknown>);
  return result;
});
const idempotency = createIdempotencyMiddleware(trpc, {
  engine: (ctx: Context) => engineFor(ctx.db),
  scope: (_ctx: Context) => "acme",
  http: (ctx) => ctx.http,
});

const router = trpc.router({
  plain: trpc.procedure
    .use(spy)
    .input(z.object({ value: z.string() }))
    .mutation(({ input }) => ({ value: input.value })),
  idempotent: trpc.procedure
    .use(spy)
    .input(z.object({ value: z.string() }))
    .use(idempotency)
    .mutation(async ({ ctx, input }) => {
      expectTypeOf(ctx.tx).toEqualTypeOf<Tx>();
      expectTypeOf(ctx.idempotencyKey).toEqualTypeOf<string>();
      await ctx.tx.testEffect.create({ data: { scope: "acme", value: input.value } });
      return { value: input.value };
    }),
});

async function post(path: string, key: string, input: unknown) {
  const res = await postToRouter(router, t.db, path, key, input);
  return {
    status: res.status,
    body: await res.text(),
    replayed: res.headers.get("idempotent-replayed") === "true",
  };
}

describe("the replay's result, against tRPC's own resolver", () => {
  it("has the same fields and marker as the result tRPC's resolver returns", async () => {
    seen.length = 0;
    const key = randomUUID();
    const value = `internals-${randomUUID()}`;
    const native = await post("plain", key, { value });
    const first = await post("idempotent", key, { value });
    const replay = await post("idempotent", key, { value });
    expect([native.status, first.status, replay.status]).toEqual([200, 200, 200]);
    expect(replay).toMatchObject({ replayed: true, body: first.body });
    expect(replay.body).toBe(native.body);

    const [resolverResult, , replayResult] = seen;
    expect(Object.keys(replayResult!).sort()).toEqual(Object.keys(resolverResult!).sort());
    expect(replayResult!.marker).toBe(resolverResult!.marker);
    expect(replayResult).toMatchObject({ ok: true, data: { value } });
  });
});
