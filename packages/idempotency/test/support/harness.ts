// A business stand-in for the engine's tests: a table of "effects" and one operation reachable
// through both entry points (the tRPC middleware and the plain wrapper), so every protocol rule is
// checked the same way through each. It is what an adopting app does, in miniature.
import { initTRPC, TRPCError, type AnyTRPCRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { z } from "zod";
import {
  createIdempotencyEngine,
  DeterministicError,
  IdempotencyError,
  reasonOf as reasonOfError,
  withIdempotency,
  type EngineOptions,
  type IdempotencyEngine,
} from "../../src/index";
import type { EngineConfigInput } from "../../src/entry/config";
import { createIdempotencyMiddleware, fetchHttpAccess } from "../../src/entry/trpc";
import { idempotent } from "../../src/http/index";
import { requestIdentity } from "../../src/http/request-identity";
import { fingerprint } from "../../src/fingerprint";
import { parsePreferWait } from "../../src/wait/prefer";
import { poolOf, type Db, type TestDatabase } from "./database";
import type { Prisma } from "./generated/client";

export type Tx = Prisma.TransactionClient;
export type Engine = IdempotencyEngine<Tx>;
export type Mode = "ok" | "deterministic" | "transient";
export interface EffectInput {
  value: string;
  mode?: Mode;
  extra?: Record<string, unknown>;
  /** Also claim this slug (unique per scope): a taken one is the handler's own P2002. */
  slug?: string;
}

const engines = new WeakMap<Db, Engine>();

/** The engine the entry points use for `db`: made on first use, or by `configure`. */
export function engineFor(db: Db): Engine {
  let engine = engines.get(db);
  if (!engine)
    engines.set(db, (engine = createIdempotencyEngine<Tx>({ prisma: db, pool: poolOf(db) })));
  return engine;
}

/** Tests pass configuration: from now on `db`'s requests run on an engine with `config`. */
export function configure(
  db: Db,
  config: EngineConfigInput = {},
  options: Pick<EngineOptions<Tx>, "preparedStatements" | "listen" | "warn"> = {},
): Engine {
  const engine = createIdempotencyEngine<Tx>({ prisma: db, pool: poolOf(db), config, ...options });
  engines.set(db, engine);
  return engine;
}

/** A gate that parks the next execution inside its transaction until the test opens it. */
export class Gate {
  private openGate!: () => void;
  private failGate!: (error: Error) => void;
  private markReached!: () => void;
  readonly opened = new Promise<void>((resolve, reject) => {
    this.openGate = resolve;
    this.failGate = reject;
  });
  /** Resolves once a handler is parked at this gate. */
  readonly reached = new Promise<void>((resolve) => (this.markReached = resolve));
  open(): void {
    this.openGate();
  }
  /** The parked handler throws `error` (a transient failure: the engine releases the key). */
  fail(error: Error): void {
    this.failGate(error);
  }
  async park(): Promise<void> {
    this.markReached();
    await this.opened;
  }
}

const parked: Gate[] = [];
/** The next execution (of any request) parks at `gate` after its business write. */
export function parkNextExecution(gate: Gate): void {
  parked.push(gate);
}

export const executions = { count: 0 };

async function effect(tx: Tx, scope: string, input: EffectInput) {
  executions.count++;
  const row = await tx.testEffect.create({
    data: { scope, value: input.value },
    select: { id: true },
  });
  if (input.slug !== undefined) await tx.testSlug.create({ data: { scope, slug: input.slug } });
  const gate = parked.shift();
  if (gate) {
    await gate.park();
    // A business read after the pause: if the store went away meanwhile, the handler's own query
    // is the first to find out (not only the engine's completion).
    await tx.testEffect.count({ where: { id: row.id } });
  }
  return row.id;
}

/** Out of stock, as an app would say it: a 412 whose cause carries the reason. */
function outOfStock(message: string): TRPCError {
  return new TRPCError({
    code: "PRECONDITION_FAILED",
    message,
    cause: Object.assign(new Error(message), { reason: "out_of_stock" }),
  });
}

// ---------------------------------------------------------------------------------------------
// The tRPC app: a context with the database, the headers and the caller's scope.

interface Context {
  db: Db;
  headers: Headers;
  resHeaders: Headers;
  batchSize: number;
}

const SCOPE_BY_TOKEN: Record<string, string> = { acme_token: "acme", globex_token: "globex" };

/** The scope of the caller with this Authorization header (`Bearer acme_token`: acme). */
export function scopeOfAuthorization(header: string | null | undefined): string | undefined {
  return SCOPE_BY_TOKEN[header?.replace(/^Bearer /, "") ?? ""];
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    // No stack in answers: it differs between the first answer and a replay (and leaks insides).
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, data: { ...data, reason: reasonOfError(error) } };
  },
});

const authed = t.procedure.use(function authenticate({ ctx, next }) {
  const scope = scopeOfAuthorization(ctx.headers.get("authorization"));
  if (!scope) throw new Error("no such token");
  return next({ ctx: { scope } });
});

const idempotency = createIdempotencyMiddleware(t, {
  engine: (ctx) => engineFor(ctx.db),
  scope: (ctx: Context & { scope: string }) => ctx.scope,
  http: (ctx) => ({
    header: (n) => ctx.headers.get(n),
    setHeader: (n, v) => ctx.resHeaders.set(n, v),
    batchSize: ctx.batchSize,
  }),
});

const effectInput = z.object({
  value: z.string().min(1),
  mode: z.enum(["ok", "deterministic", "transient"]).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  slug: z.string().optional(),
});

export const testRouter = t.router({
  effect: authed
    .input(effectInput)
    .use(idempotency)
    .mutation(async ({ ctx, input }) => {
      const id = await effect(ctx.tx, ctx.scope, input);
      if (input.mode === "deterministic") throw outOfStock(`Not enough ${input.value}`);
      if (input.mode === "transient") throw new Error("the provider timed out");
      return { effectId: id, value: input.value, key: ctx.idempotencyKey };
    }),
});

// ---------------------------------------------------------------------------------------------
// The entry points, as a client sees them.

export interface Answer {
  status: number;
  /** result.data on success, the error object on failure (tRPC's shape, or the wrapper's body). */
  body: any;
  /** The HTTP body's exact text (tRPC), or the wrapper's bodyText. */
  text: string;
  replayed: boolean;
  headers: Headers;
}

export interface EntryPoint {
  name: string;
  /** The fingerprint this entry point's request for `input` has (the stored record's). */
  fingerprint(input: EffectInput): string;
  call(
    db: Db,
    args: { token?: string; key?: string; input: EffectInput; headers?: Record<string, string> },
  ): Promise<Answer>;
}

/**
 * A keyed tRPC POST of `input` to `path` through `router`'s fetch handler, with a context of `db`
 * and the request's HTTP access (fetchHttpAccess), as a client's mutation arrives.
 */
export function postToRouter(
  router: AnyTRPCRouter,
  db: Db,
  path: string,
  key: string,
  input: unknown,
): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request(`http://localhost/api/trpc/${path}`, {
      method: "POST",
      headers: { "idempotency-key": key, "content-type": "application/json" },
      body: JSON.stringify(input),
    }),
    router,
    createContext: (opts) => ({ db, http: fetchHttpAccess(opts) }),
  });
}

/** `req` through the test router's fetch handler, with the context the middleware reads. */
export function serveTestTrpc(db: Db, req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: testRouter,
    createContext: (opts) => ({
      db,
      headers: opts.req.headers,
      resHeaders: opts.resHeaders,
      batchSize: opts.info.calls.length,
    }),
  });
}

export const trpcEntry: EntryPoint = {
  name: "tRPC middleware",
  fingerprint: (input) => fingerprint("effect", input),
  async call(db, { token = "acme_token", key, input, headers }) {
    const h = new Headers(headers);
    h.set("authorization", `Bearer ${token}`);
    h.set("content-type", "application/json");
    if (key !== undefined) h.set("idempotency-key", key);
    const res = await serveTestTrpc(
      db,
      new Request("http://localhost/api/trpc/effect", {
        method: "POST",
        headers: h,
        body: JSON.stringify(input),
      }),
    );
    const text = await res.text();
    const json = JSON.parse(text) as { result?: { data: unknown }; error?: unknown };
    return {
      status: res.status,
      body: res.ok ? json.result!.data : json.error,
      text,
      replayed: res.headers.get("idempotent-replayed") === "true",
      headers: res.headers,
    };
  },
};

/** A first answer (never a replay) with this JSON body. */
function answerOf(status: number, body: unknown, headers = new Headers()): Answer {
  return { status, body, text: JSON.stringify(body), replayed: false, headers };
}

/** What the framework answers when the handler throws: a 500 with the error's message. */
const frameworkError = (error: unknown): Answer =>
  answerOf(500, { message: (error as Error).message });

export const wrapperEntry: EntryPoint = {
  name: "plain wrapper",
  fingerprint: (input) => fingerprint("effect", input),
  async call(db, { token = "acme_token", key, input, headers }) {
    const scope = SCOPE_BY_TOKEN[token]!;
    const waitSeconds = parsePreferWait(new Headers(headers).get("prefer"));
    const call = { scope, key: key ?? "", operation: "effect", request: input, waitSeconds };
    try {
      const result = await withIdempotency(engineFor(db), call, async (tx) => {
        const id = await effect(tx, scope, input);
        if (input.mode === "deterministic")
          throw new DeterministicError(412, {
            reason: "out_of_stock",
            message: `Not enough ${input.value}`,
          });
        if (input.mode === "transient") throw new Error("the provider timed out");
        return { effectId: id, value: input.value, key: key ?? "" };
      });
      const headers = new Headers({ "Idempotency-Key-Expires": result.expiresAt.toUTCString() });
      if (result.appliedWaitSeconds !== undefined)
        headers.set("Preference-Applied", `wait=${result.appliedWaitSeconds}`);
      return {
        status: result.status,
        body: result.body,
        text: result.bodyText,
        replayed: result.replayed,
        headers,
      };
    } catch (error) {
      if (error instanceof IdempotencyError) {
        const headers = new Headers(
          error.retryAfterSeconds ? { "Retry-After": String(error.retryAfterSeconds) } : {},
        );
        if (error.appliedWaitSeconds !== undefined)
          headers.set("Preference-Applied", `wait=${error.appliedWaitSeconds}`);
        return answerOf(error.httpStatus, { data: { reason: error.reason } }, headers);
      }
      return frameworkError(error);
    }
  },
};

/**
 * The effect as a plain Fetch API route, protected by @once/idempotency/http (one engine per
 * database).
 */
const effectRoutes = new WeakMap<Engine, (request: Request) => Promise<Response>>();
function effectRoute(db: Db): (request: Request) => Promise<Response> {
  const engine = engineFor(db);
  let route = effectRoutes.get(engine);
  if (!route) {
    route = idempotent<Tx>(
      async (request, { tx, scope, key }) => {
        const input = effectInput.parse(await request.json());
        const id = await effect(tx, scope, input);
        if (input.mode === "deterministic")
          return Response.json(
            { reason: "out_of_stock", message: `Not enough ${input.value}` },
            { status: 412 },
          );
        if (input.mode === "transient") throw new Error("the provider timed out");
        return Response.json({ effectId: id, value: input.value, key });
      },
      {
        engine,
        scope: (request) =>
          scopeOfAuthorization(request.headers.get("authorization")) ??
          new Response(null, { status: 401 }),
        operation: "effect",
      },
    );
    effectRoutes.set(engine, route);
  }
  return route;
}

const EFFECT_URL = "http://localhost/effect";

export const httpEntry: EntryPoint = {
  name: "HTTP layer",
  fingerprint(input) {
    const request = new Request(EFFECT_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    return fingerprint(
      "effect",
      requestIdentity(
        request,
        new URL(EFFECT_URL),
        new TextEncoder().encode(JSON.stringify(input)),
      ),
    );
  },
  async call(db, { token = "acme_token", key, input, headers }) {
    const h = new Headers(headers);
    h.set("authorization", `Bearer ${token}`);
    h.set("content-type", "application/json");
    if (key !== undefined) h.set("idempotency-key", key);
    let res: Response;
    try {
      res = await effectRoute(db)(
        new Request(EFFECT_URL, { method: "POST", headers: h, body: JSON.stringify(input) }),
      );
    } catch (error) {
      return frameworkError(error);
    }
    const text = await res.text();
    return {
      status: res.status,
      body: JSON.parse(text),
      text,
      replayed: res.headers.get("idempotent-replayed") === "true",
      headers: res.headers,
    };
  },
};

export const ENTRY_POINTS = [trpcEntry, wrapperEntry, httpEntry];

export function reasonOf(answer: Answer): string | undefined {
  return answer.body?.data?.reason ?? answer.body?.reason;
}

export async function effectsFor(db: Db, value: string): Promise<number> {
  return db.testEffect.count({ where: { value } });
}

export async function keyRow(db: Db, scope: string, key: string) {
  return db.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
}

/**
 * An engine on `t`'s database that listens (replay cache on, as a production one), for one test
 * file.
 */
export function useListeningEngine(t: TestDatabase): { readonly engine: Engine } {
  const handle = {} as { engine: Engine };
  beforeAll(async () => {
    handle.engine = configure(
      t.db,
      {},
      { listen: () => new pg.Client({ connectionString: t.url }) },
    );
    await handle.engine.ready;
  });
  afterAll(async () => {
    await handle.engine?.close();
  });
  return handle;
}
