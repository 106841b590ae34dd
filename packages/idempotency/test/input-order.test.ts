// A procedure that validates its input after the idempotency middleware
// (`.use(idempotency).input(schema)`) still records invalid input nowhere: the parser's 400 is not
// the handler's answer, so the key is released and the error passes on with its cause (the zod
// issues an errorFormatter shows). Validating first remains the way to write it: nothing is then
// reserved at all.
import { randomUUID } from "node:crypto";
import { initTRPC, TRPCError, type TRPCDefaultErrorShape } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z, ZodError } from "zod";
import { reasonOf } from "../src/index";
import { createIdempotencyMiddleware, type HttpAccess } from "../src/entry/trpc";
import { useTestDatabase, type Db } from "./support/database";
import { effectsFor, engineFor, keyRow, postToRouter } from "./support/harness";

const t = useTestDatabase();

interface Context {
  db: Db;
  http: HttpAccess;
}

const trpc = initTRPC.context<Context>().create({
  errorFormatter: ({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) => {
    const { stack: _stack, ...data } = shape.data;
    const zodIssues = error.cause instanceof ZodError ? error.cause.issues.length : null;
    return { ...shape, data: { ...data, reason: reasonOf(error), zodIssues } };
  },
});
const idempotency = createIdempotencyMiddleware(trpc, {
  engine: (ctx) => engineFor(ctx.db),
  scope: (_ctx: Context) => "acme",
  http: (ctx) => ctx.http,
});

const router = trpc.router({
  // Misordered on purpose: the input is parsed after the key is reserved.
  create: trpc.procedure
    .use(idempotency)
    .input(z.object({ value: z.string().min(1), refuse: z.boolean().optional() }))
    .mutation(async ({ ctx, input }) => {
      if (input.refuse)
        throw new TRPCError({ code: "PRECONDITION_FAILED", message: "refused on purpose" });
      await ctx.tx.testEffect.create({ data: { scope: "acme", value: input.value } });
      return { value: input.value };
    }),
});

async function post(key: string, body: unknown) {
  const res = await postToRouter(router, t.db, "create", key, body);
  return {
    status: res.status,
    body: (await res.json()) as { error?: { data: { zodIssues: number | null; reason?: string } } },
  };
}

describe("an input parser after the idempotency middleware", () => {
  it("records invalid input nowhere: the key is released, the parser's issues reach the caller", async () => {
    const key = randomUUID();
    const invalid = await post(key, { value: "" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error?.data.zodIssues).toBe(1);
    expect(await keyRow(t.db, "acme", key)).toBeNull();

    // The same key with valid input now runs: nothing was stored for it.
    const value = `ok-${randomUUID()}`;
    const valid = await post(key, { value });
    expect(valid.status).toBe(200);
    expect(await effectsFor(t.db, value)).toBe(1);
  });

  // (A handler's own 400 in such a procedure is released too: it cannot be told from the parser's.)
  it("still stores the handler's own deterministic 4xx when the input was valid", async () => {
    const key = randomUUID();
    const first = await post(key, { value: "x", refuse: true });
    expect(first.status).toBe(412);
    expect((await keyRow(t.db, "acme", key))?.status).toBe("FAILED");
  });
});
