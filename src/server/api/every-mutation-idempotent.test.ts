// "Every mutation is idempotent" as a check, not a convention: the test walks the app's router and
// fails on any mutation that does not pass through the idempotency middleware, the one
// `idempotentProcedure` and `adminIdempotentProcedure` add. It has no exception: the benches'
// control (the checkout without the engine) lives in lab/, outside the app and its build.
import type { AnyProcedure, AnyRouter } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "./root";
import {
  adminIdempotentProcedure,
  adminProcedure,
  idempotentProcedure,
  tenantProcedure,
} from "./trpc";

// tRPC keeps a procedure's middlewares, in order, on `_def.middlewares` (builders and built
// procedures alike); its public types leave that field out.
type Middleware = (...args: never[]) => unknown;
const middlewaresOf = (builder: { _def: object }) =>
  (builder._def as { middlewares: Middleware[] }).middlewares;
/** tRPC's own input/output parsers carry a `_type`; the app's middlewares do not. */
const isParser = (middleware: Middleware) => "_type" in middleware;

/** What a declaring procedure adds to the one it builds on, besides parsing its input. */
function added(declaring: { _def: object }, base: { _def: object }): Middleware[] {
  return middlewaresOf(declaring).filter((m) => !middlewaresOf(base).includes(m) && !isParser(m));
}

const input = z.object({});
// The first middleware idempotentProcedure adds after parsing its input: the engine's (the ones
// after it only translate the handler's errors).
const [idempotency] = added(idempotentProcedure(input), tenantProcedure);

function mutationsOf(router: AnyRouter): [path: string, procedure: AnyProcedure][] {
  return Object.entries(router._def.procedures as Record<string, AnyProcedure>).filter(
    ([, procedure]) => procedure._def.type === "mutation",
  );
}

describe("every mutation goes through the idempotency middleware", () => {
  it("the middleware is the engine's, the one both idempotent procedures add first", () => {
    expect(idempotency?.name).toBe("idempotency"); // createIdempotencyMiddleware's function
    expect(added(adminIdempotentProcedure(input), adminProcedure)[0]).toBe(idempotency);
  });

  const mutations = mutationsOf(appRouter);

  it("the walk finds the app's mutations", () => {
    const paths = mutations.map(([path]) => path);
    expect(paths).toContain("checkout.placeOrder");
    expect(paths).toContain("admin.keys.bust");
  });

  it.each(mutations)("%s is idempotent", (_path, procedure) => {
    expect(middlewaresOf(procedure)).toContain(idempotency);
  });
});
