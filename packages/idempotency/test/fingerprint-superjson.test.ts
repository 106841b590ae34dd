// The fingerprint through tRPC with superjson, against the real database: the middleware is handed
// a real Set, and the same key with another Set is 422 while the same Set with its object keys (or
// members) in another order replays. A key stored before the fingerprint saw such values (its old
// fingerprint written as the earlier versions computed it) still replays for the same input. Each
// rule is run on an engine without the replay cache (the stored row decides) and on one that
// listens (the answer in memory decides, from the second request on).
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { initTRPC, type TRPCDefaultErrorShape, type TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createIdempotencyEngine, reasonOf } from "../src/index";
import { createIdempotencyMiddleware, fetchHttpAccess, type HttpAccess } from "../src/entry/trpc";
import { fingerprint } from "../src/fingerprint";
import { poolOf, useTestDatabase, type Db } from "./support/database";
import { effectsFor, keyRow, useListeningEngine, type Engine, type Tx } from "./support/harness";

const t = useTestDatabase();
const listening = useListeningEngine(t);
const withoutCache: { engine?: Engine } = {};
beforeAll(() => {
  withoutCache.engine = createIdempotencyEngine<Tx>({ prisma: t.db, pool: poolOf(t.db) });
});

interface Context {
  db: Db;
  http: HttpAccess;
  engine: Engine;
}

const trpc = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter: ({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) => ({
    ...shape,
    data: { ...shape.data, stack: undefined, reason: reasonOf(error) },
  }),
});
const idempotency = createIdempotencyMiddleware(trpc, {
  engine: (ctx) => ctx.engine,
  scope: (_ctx: Context) => "acme",
  http: (ctx) => ctx.http,
});
const router = trpc.router({
  tag: trpc.procedure
    .input(
      z.object({ value: z.string(), tags: z.set(z.string()), meta: z.object({ a: z.number() }) }),
    )
    .use(idempotency)
    .mutation(async ({ ctx, input }) => {
      const row = await ctx.tx.testEffect.create({ data: { scope: "acme", value: input.value } });
      return { id: row.id, tags: input.tags };
    }),
});

type TagInput = { value: string; tags: Set<string>; meta: { a: number; b?: string } };

/** A superjson client into `router` on `engine`, sending `key`; says whether each answer replayed. */
function clientFor(engine: Engine, key: string) {
  const replayed: boolean[] = [];
  const link = httpLink({
    url: "http://localhost/api/trpc",
    transformer: superjson,
    headers: () => ({ "idempotency-key": key }),
    fetch: async (url, init) => {
      const res = await fetchRequestHandler({
        endpoint: "/api/trpc",
        req: new Request(url, init),
        router,
        createContext: (opts) => ({ db: t.db, http: fetchHttpAccess(opts), engine }),
      });
      replayed.push(res.headers.get("idempotent-replayed") === "true");
      return res;
    },
  });
  const client = createTRPCClient<typeof router>({ links: [link] });
  return { tag: (input: TagInput) => client.tag.mutate(input), replayed };
}

async function refusal(answer: Promise<unknown>) {
  const error = await answer.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  const data = (error as TRPCClientError<typeof router>).data as {
    httpStatus: number;
    reason?: string;
  };
  return { status: data.httpStatus, reason: data.reason };
}

const ENGINES: [string, () => Engine][] = [
  ["without the replay cache", () => withoutCache.engine!],
  ["with the replay cache", () => listening.engine],
];

describe.each(ENGINES)("a superjson input's fingerprint, %s", (_name, engineOf) => {
  it("answers 422 to the same key with another Set, and keeps the first request's record", async () => {
    const key = randomUUID();
    const value = `set-${randomUUID()}`;
    const { tag } = clientFor(engineOf(), key);
    const first: TagInput = { value, tags: new Set(["a"]), meta: { a: 1 } };
    await tag(first);
    for (const tags of [new Set(["b"]), new Set(["a", "b"]), new Set<string>()])
      expect(await refusal(tag({ ...first, tags }))).toEqual({
        status: 422,
        reason: "idempotency_key_reused",
      });
    expect(await effectsFor(t.db, value)).toBe(1);
    const row = await keyRow(t.db, "acme", key);
    expect(row).toMatchObject({ status: "COMPLETED", fingerprint: fingerprint("tag", first) });
  });

  it("replays the same Set sent with its object keys and its members in another order", async () => {
    const key = randomUUID();
    const value = `order-${randomUUID()}`;
    const { tag, replayed } = clientFor(engineOf(), key);
    const first = await tag({ value, tags: new Set(["a", "b"]), meta: { a: 1, b: "x" } });
    const retry = await tag({ meta: { b: "x", a: 1 }, tags: new Set(["b", "a"]), value });
    expect(retry).toEqual(first);
    expect(first.tags).toEqual(new Set(["a", "b"]));
    expect(replayed).toEqual([false, true]);
    expect(await effectsFor(t.db, value)).toBe(1);
  });

  it("replays a key stored under the earlier versions' fingerprint for the same input, no 422", async () => {
    const key = randomUUID();
    const input: TagInput = { value: "upgraded", tags: new Set(["a"]), meta: { a: 1, b: "x" } };
    // The earlier versions' fingerprint of ("tag", input): a Set was written `{}`. A literal, so
    // that a change of the legacy rule fails here.
    const legacy = "ad7188b49ce5246860dff65c63028961fcc7ad84216de44929913142872bc5ec";
    expect(fingerprint("tag", input)).not.toBe(legacy);
    const stored = { id: "before-the-upgrade", tags: new Set(["a"]) };
    await t.db.$executeRaw`
      INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
        "responseStatus", "responseBody", "responseContentType", "completedAt", "expiresAt")
      VALUES ('acme', ${key}, 'tag', ${legacy}, 'COMPLETED', 200,
        ${JSON.stringify(superjson.serialize(stored))}, 'application/json', now(),
        now() + interval '1 hour')`;
    const { tag, replayed } = clientFor(engineOf(), key);
    // The second answer comes from memory when the engine keeps one (the first came from the row).
    expect([await tag(input), await tag(input)]).toEqual([stored, stored]);
    expect(replayed).toEqual([true, true]);
    expect(await effectsFor(t.db, "upgraded")).toBe(0);
    expect(await keyRow(t.db, "acme", key)).toMatchObject({ fingerprint: legacy });
  });
});
