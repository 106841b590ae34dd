// A business stand-in for the engine's tests: a table of "effects" and one operation reachable
// through both entry points (the tRPC middleware and the plain wrapper), so every protocol rule is
// checked the same way through each. Nothing here comes from the shop: the engine is tested alone.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { z } from "zod";
import { createContextFor } from "../server/api/context";
import { createTRPCRouter, idempotentProcedure, ReasonedError } from "../server/api/trpc";
import type { Db } from "../server/db/client";
import { engineFor } from "../server/engine";
import { DeterministicError, IdempotencyError, withIdempotency, type Tx } from "../server/idempotency";

export const EFFECTS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "TestEffect" (
  "id" SERIAL PRIMARY KEY, "scope" TEXT NOT NULL, "value" TEXT NOT NULL, "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now())`;

export type Mode = "ok" | "deterministic" | "transient";
export interface EffectInput {
  value: string;
  mode?: Mode;
  extra?: Record<string, unknown>;
}

/** A gate that parks the next execution inside its transaction until the test opens it. */
export class Gate {
  private openGate!: () => void;
  private markReached!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.openGate = resolve));
  /** Resolves once a handler is parked at this gate. */
  readonly reached = new Promise<void>((resolve) => (this.markReached = resolve));
  open(): void {
    this.openGate();
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
  const [row] = await tx.$queryRaw<{ id: number }[]>`
    INSERT INTO "TestEffect" ("scope", "value") VALUES (${scope}, ${input.value}) RETURNING "id"`;
  await parked.shift()?.park();
  return row!.id;
}

const effectInput = z.object({
  value: z.string().min(1),
  mode: z.enum(["ok", "deterministic", "transient"]).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

export const testRouter = createTRPCRouter({
  effect: idempotentProcedure(effectInput).mutation(async ({ ctx, input }) => {
    const id = await effect(ctx.tx, ctx.tenantId, input);
    if (input.mode === "deterministic") throw new ReasonedError("PRECONDITION_FAILED", "out_of_stock", `Not enough ${input.value}`);
    if (input.mode === "transient") throw new Error("the provider timed out");
    return { effectId: id, value: input.value };
  }),
});

export interface Answer {
  status: number;
  /** result.data on success, the error object on failure (tRPC's shape, or the wrapper's body). */
  body: any;
  replayed: boolean;
  headers: Headers;
}

const SCOPE_BY_TOKEN: Record<string, string> = { acme_demo_token: "acme", globex_demo_token: "globex" };

export interface EntryPoint {
  name: string;
  call(db: Db, args: { token?: string; key?: string; input: EffectInput; headers?: Record<string, string> }): Promise<Answer>;
}

export const trpcEntry: EntryPoint = {
  name: "tRPC middleware",
  async call(db, { token = "acme_demo_token", key, input, headers }) {
    const h = new Headers(headers);
    h.set("authorization", `Bearer ${token}`);
    h.set("content-type", "application/json");
    if (key !== undefined) h.set("idempotency-key", key);
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost/api/trpc/effect", { method: "POST", headers: h, body: JSON.stringify(input) }),
      router: testRouter,
      createContext: (opts) => createContextFor(db, opts.req.headers, opts.resHeaders, opts.info.calls.length),
    });
    const json = (await res.json()) as { result?: { data: unknown }; error?: unknown };
    return {
      status: res.status,
      body: res.ok ? json.result!.data : json.error,
      replayed: res.headers.get("idempotent-replayed") === "true",
      headers: res.headers,
    };
  },
};

export const wrapperEntry: EntryPoint = {
  name: "plain wrapper",
  async call(db, { token = "acme_demo_token", key, input }) {
    const scope = SCOPE_BY_TOKEN[token]!;
    try {
      const result = await withIdempotency(engineFor(db).deps(), { scope, key: key ?? "", operation: "effect", request: input }, async (tx) => {
        const id = await effect(tx, scope, input);
        if (input.mode === "deterministic") throw new DeterministicError(412, { reason: "out_of_stock", message: `Not enough ${input.value}` });
        if (input.mode === "transient") throw new Error("the provider timed out");
        return { effectId: id, value: input.value };
      });
      const headers = new Headers({ "Idempotency-Key-Expires": result.expiresAt.toUTCString() });
      return { status: result.status, body: result.body, replayed: result.replayed, headers };
    } catch (error) {
      if (error instanceof IdempotencyError) {
        const headers = new Headers(error.retryAfterSeconds ? { "Retry-After": String(error.retryAfterSeconds) } : {});
        return { status: error.httpStatus, body: { data: { reason: error.reason } }, replayed: false, headers };
      }
      return { status: 500, body: { message: (error as Error).message }, replayed: false, headers: new Headers() };
    }
  },
};

export const ENTRY_POINTS = [trpcEntry, wrapperEntry];

export function reasonOf(answer: Answer): string | undefined {
  return answer.body?.data?.reason ?? answer.body?.reason;
}

export async function effectsFor(db: Db, value: string): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS "n" FROM "TestEffect" WHERE "value" = ${value}`;
  return row!.n;
}

export async function keyRow(db: Db, scope: string, key: string) {
  return db.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
}
