// The router's transformer, first call and replay, through tRPC's real fetch adapter and
// @trpc/client: with superjson a Date, a Map, a BigInt and undefined arrive as themselves, and the
// replay's bytes are the first answer's. Without a transformer, plain JSON as always.
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpLink } from "@trpc/client";
import {
  initTRPC,
  type AnyTRPCRouter,
  type TRPCDefaultErrorShape as DefaultErrorShape,
  type TRPCError,
} from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { reasonOf } from "../src/index";
import { createIdempotencyMiddleware, fetchHttpAccess, type HttpAccess } from "../src/entry/trpc";
import type { TRPCInstanceLike } from "../src/trpc/middleware";
import { useTestDatabase, type Db } from "./support/database";
import { engineFor, effectsFor, type Tx } from "./support/harness";

const t = useTestDatabase();

interface Context {
  db: Db;
  http: HttpAccess;
}

const CREATED_AT = new Date("2026-11-24T01:02:03.456Z");

const errorFormatter = ({ shape, error }: { shape: DefaultErrorShape; error: TRPCError }) => {
  const { stack: _stack, ...data } = shape.data;
  return { ...shape, data: { ...data, reason: reasonOf(error) } };
};
const withSuperjson = initTRPC
  .context<Context>()
  .create({ transformer: superjson, errorFormatter });
const plain = initTRPC.context<Context>().create({ errorFormatter });

const idempotencyOn = (trpc: TRPCInstanceLike) =>
  createIdempotencyMiddleware(trpc, {
    engine: (ctx) => engineFor(ctx.db),
    scope: (_ctx: Context) => "acme",
    http: (ctx) => ctx.http,
  });
const input = z.object({ value: z.string() });

/**
 * The procedure's answer: what superjson carries, or (plain JSON cannot carry a BigInt) null for
 * it.
 */
async function create(tx: Tx, key: string, value: string, rich: boolean) {
  const row = await tx.testEffect.create({ data: { scope: "acme", value } });
  return {
    id: row.id,
    createdAt: CREATED_AT,
    tags: new Map([["colour", "red"]]),
    big: rich ? 2n ** 70n : null,
    nothing: undefined,
    key,
  };
}

const superjsonRouter = withSuperjson.router({
  create: withSuperjson.procedure
    .input(input)
    .use(idempotencyOn(withSuperjson))
    .mutation(({ ctx, input }) => create(ctx.tx, ctx.idempotencyKey, input.value, true)),
});
const plainRouter = plain.router({
  create: plain.procedure
    .input(input)
    .use(idempotencyOn(plain))
    .mutation(({ ctx, input }) => create(ctx.tx, ctx.idempotencyKey, input.value, false)),
});

/** A fetch into `router` through fetchRequestHandler, keeping every HTTP body it answers. */
function fetchInto(router: AnyTRPCRouter) {
  const bodies: string[] = [];
  const replayed: boolean[] = [];
  const fetch = async (url: URL | RequestInfo, init?: RequestInit) => {
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request(url, init),
      router,
      createContext: (opts) => ({ db: t.db, http: fetchHttpAccess(opts) }),
    });
    const text = await res.text();
    bodies.push(text);
    replayed.push(res.headers.get("idempotent-replayed") === "true");
    return new Response(text, { status: res.status, headers: res.headers });
  };
  return { fetch, bodies, replayed };
}

const URL_ = "http://localhost/api/trpc";

describe("with superjson", () => {
  it("gives the first call and its replay a real Date, Map, BigInt and undefined, with the first answer's bytes", async () => {
    const value = `sj-${randomUUID()}`;
    const key = randomUUID();
    const { fetch, bodies, replayed } = fetchInto(superjsonRouter);
    const link = httpLink({
      url: URL_,
      fetch,
      transformer: superjson,
      headers: () => ({ "idempotency-key": key }),
    });
    const client = createTRPCClient<typeof superjsonRouter>({ links: [link] });
    const first = await client.create.mutate({ value });
    const again = await client.create.mutate({ value });
    for (const answer of [first, again]) {
      expect(answer.createdAt).toBeInstanceOf(Date);
      expect(answer.createdAt.getTime()).toBe(CREATED_AT.getTime());
      expect(answer.tags).toBeInstanceOf(Map);
      expect(answer.tags.get("colour")).toBe("red");
      expect(answer.big).toBe(2n ** 70n);
      expect("nothing" in answer && answer.nothing === undefined).toBe(true);
    }
    expect(again).toEqual(first);
    expect(replayed).toEqual([false, true]);
    expect(bodies[1]).toBe(bodies[0]);
    expect(await effectsFor(t.db, value)).toBe(1);
  });
});

describe("without a transformer", () => {
  it("answers plain JSON, first call and replay byte for byte (a Date as its ISO string, as JSON has it)", async () => {
    const value = `plain-${randomUUID()}`;
    const key = randomUUID();
    const { fetch, bodies, replayed } = fetchInto(plainRouter);
    const client = createTRPCClient<typeof plainRouter>({
      links: [httpLink({ url: URL_, fetch, headers: () => ({ "idempotency-key": key }) })],
    });
    const first = await client.create.mutate({ value });
    const again = await client.create.mutate({ value });
    expect(first.createdAt).toBe(CREATED_AT.toISOString());
    expect(again).toEqual(first);
    expect(replayed).toEqual([false, true]);
    expect(bodies[1]).toBe(bodies[0]);
    expect(JSON.parse(bodies[0]!)).toEqual({
      result: {
        data: {
          id: first.id,
          createdAt: CREATED_AT.toISOString(),
          tags: {},
          big: null,
          key: first.key,
        },
      },
    });
  });
});
