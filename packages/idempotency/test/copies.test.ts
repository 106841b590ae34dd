// Two copies of the package in one process, as `next build` makes them (each route and
// instrumentation bundle their own copy of a workspace package): an engine made by one copy and
// the middleware of another must still know each other's errors. Before the classes answered
// `instanceof` by a registered mark (src/brand.ts), a 422 or a 409 from such an engine reached the
// caller as a 500.
import { randomUUID } from "node:crypto";
import { cp, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { initTRPC, type TRPCDefaultErrorShape, type TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import * as first from "../src/index";
import * as firstTrpc from "../src/entry/trpc";
import { useTestDatabase, type Db } from "./support/database";
import type { Tx } from "./support/harness";

const t = useTestDatabase();
let copyDir: string;
let second: typeof first;

beforeAll(async () => {
  // A second copy of every module: the sources copied beside the package (so its dependencies
  // resolve as the package's do) and imported from there.
  const root = path.resolve(import.meta.dirname, "..");
  copyDir = await mkdtemp(path.join(root, ".copy-"));
  await cp(path.join(root, "src"), copyDir, { recursive: true });
  second = (await import(path.join(copyDir, "index.ts"))) as typeof first;
});
afterAll(async () => {
  if (copyDir) await rm(copyDir, { recursive: true, force: true });
});

describe("two copies of the package in one process", () => {
  it("are two sets of classes that recognise each other's errors", () => {
    expect(second.IdempotencyError).not.toBe(first.IdempotencyError);
    const reused = new second.IdempotencyError("idempotency_key_reused", "reused");
    expect(reused instanceof first.IdempotencyError).toBe(true);
    expect(reused instanceof first.UniqueViolationError).toBe(false);
    const conflict = new second.UniqueViolationError(["slug"]);
    expect(conflict instanceof first.UniqueViolationError).toBe(true);
    expect(conflict instanceof first.IdempotencyError).toBe(true);
    expect(new second.DeterministicError(412, {}) instanceof first.DeterministicError).toBe(true);
    expect(first.reasonOf(new Error("wrapped", { cause: conflict }))).toBe("unique_violation");
    expect(new Error("plain") instanceof first.IdempotencyError).toBe(false);
  });

  it("answer a refusal of one copy's engine through the other copy's middleware with its status, not 500", async () => {
    interface Context {
      http: firstTrpc.HttpAccess;
    }
    const trpc = initTRPC.context<Context>().create({
      errorFormatter: ({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) => ({
        ...shape,
        data: { ...shape.data, reason: first.reasonOf(error) },
      }),
    });
    const engine = second.createIdempotencyEngine<Tx>({ prisma: t.db as Db });
    const idempotency = firstTrpc.createIdempotencyMiddleware(trpc, {
      engine,
      scope: (_ctx: Context) => "acme",
      http: (ctx) => ctx.http,
    });
    const router = trpc.router({
      create: trpc.procedure
        .input(z.object({ value: z.string() }))
        .use(idempotency)
        .mutation(async ({ ctx, input }) => {
          await ctx.tx.testEffect.create({ data: { scope: "acme", value: input.value } });
          return { value: input.value };
        }),
    });
    const post = async (key: string, value: string) => {
      const res = await fetchRequestHandler({
        endpoint: "/api/trpc",
        req: new Request("http://localhost/api/trpc/create", {
          method: "POST",
          headers: { "idempotency-key": key, "content-type": "application/json" },
          body: JSON.stringify({ value }),
        }),
        router,
        createContext: (opts) => ({ http: firstTrpc.fetchHttpAccess(opts) }),
      });
      return {
        status: res.status,
        body: (await res.json()) as { error?: { data: { reason?: string } } },
      };
    };
    const key = randomUUID();
    expect((await post(key, "a")).status).toBe(200);
    const reused = await post(key, "b");
    expect(reused.status).toBe(422);
    expect(reused.body.error?.data.reason).toBe("idempotency_key_reused");
    await engine.close();
  });
});
