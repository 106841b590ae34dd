// The tRPC middleware's header names, as an HTTP route's: the draft's profile in one option, or
// names set one by one (the key read under its name; replay, expiry and omitted-body headers
// written under theirs), through tRPC's real fetch adapter.
import { randomUUID } from "node:crypto";
import { initTRPC } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createIdempotencyMiddleware, fetchHttpAccess, type HttpAccess } from "../src/entry/trpc";
import type { HeaderNamesOption } from "../src/header-names";
import { useTestDatabase, type Db } from "./support/database";
import { configure, effectsFor, type Engine } from "./support/harness";

const t = useTestDatabase();

interface Context {
  db: Db;
  http: HttpAccess;
}
const trpc = initTRPC.context<Context>().create();

function routerWith(engine: Engine, headerNames: HeaderNamesOption) {
  const idempotency = createIdempotencyMiddleware(trpc, {
    engine,
    scope: (_ctx: Context) => "acme",
    http: (ctx) => ctx.http,
    headerNames,
  });
  return trpc.router({
    create: trpc.procedure
      .use(idempotency)
      .input(z.object({ value: z.string(), size: z.number().default(0) }))
      .mutation(async ({ ctx, input }) => {
        await ctx.tx.testEffect.create({ data: { scope: "acme", value: input.value } });
        return { value: input.value, padding: "x".repeat(input.size) };
      }),
  });
}

function caller(router: ReturnType<typeof routerWith>) {
  return (headers: Record<string, string>, input: { value: string; size?: number }) =>
    fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost/api/trpc/create", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(input),
      }),
      router,
      createContext: (opts) => ({ db: t.db, http: fetchHttpAccess(opts) }),
    });
}

describe("the tRPC middleware's header names", () => {
  it('headerNames: "draft" replays under Idempotency-Replayed, and says Idempotency-Replay: omitted beside the 413 of an answer stored without its body', async () => {
    const send = caller(routerWith(configure(t.db, { maxStoredBodyBytes: 1024 }), "draft"));
    const key = randomUUID();
    const value = `draft-${key}`;
    const first = await send({ "idempotency-key": key }, { value });
    const again = await send({ "idempotency-key": key }, { value });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.headers.get("idempotency-key-expires")).toMatch(/GMT$/);
    expect(await effectsFor(t.db, value)).toBe(1);

    const bigKey = randomUUID();
    const big = { value: `big-${bigKey}`, size: 4096 };
    expect((await send({ "idempotency-key": bigKey }, big)).status).toBe(200);
    const omitted = await send({ "idempotency-key": bigKey }, big);
    expect(omitted.status).toBe(413);
    expect(omitted.headers.get("idempotency-replay")).toBe("omitted");
    expect(omitted.headers.get("idempotency-replayed")).toBe("true");
    expect(await effectsFor(t.db, big.value)).toBe(1);
  });

  it("reads the key under the name it is given and writes the others under theirs", async () => {
    const send = caller(
      routerWith(configure(t.db), { key: "X-Request-Key", replayed: "X-Replayed" }),
    );
    const key = randomUUID();
    const value = `named-${key}`;
    // The default name carries no key here: a mutation without one is refused, nothing runs.
    const unnamed = await send({ "idempotency-key": key }, { value });
    expect(unnamed.status).toBe(400);
    expect(await effectsFor(t.db, value)).toBe(0);

    const first = await send({ "x-request-key": key }, { value });
    const again = await send({ "x-request-key": key }, { value });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get("x-replayed")).toBe("true");
    expect(first.headers.get("x-replayed")).toBeNull();
    expect(await effectsFor(t.db, value)).toBe(1);
  });
});
