// The client (`@once/idempotency/client`) against a real tRPC HTTP server on a free port, with the
// engine on a real PostgreSQL behind it: the link's promises are checked by what the server did
// (how many executions, which keys it saw) and what it answered, not by a scripted stand-in.
import { randomUUID } from "node:crypto";
import {
  createTRPCClient,
  httpBatchLink,
  httpBatchStreamLink,
  httpLink,
  splitLink,
  type TRPCClientError,
} from "@trpc/client";
import { initTRPC, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createIntentKeys,
  idempotencyHeaders,
  idempotencyInfoOfError,
  idempotencyLink,
  type IdempotencyEvent,
  type IdempotencyLinkOptions,
  type IntentKeys,
} from "../src/client/index";
import { useTestDatabase } from "./support/database";
import {
  configure,
  effectsFor,
  Gate,
  parkNextExecution,
  testRouter,
  type Engine,
} from "./support/harness";
import { serveFetch, type HttpServer } from "./support/http";

const t = useTestDatabase({ poolMax: 20 });
const fresh = (label: string) => `${label}-${randomUUID()}`;

// A second router, without the engine: a handler's own deterministic 409 (what `unique_violation`
// is on the wire), and a query to show that queries stay on the batching link.
const plain = initTRPC.create({
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    data: { ...shape.data, reason: (error.cause as { reason?: string } | undefined)?.reason },
  }),
});
const plainCalls = { conflict: 0 };
const plainRouter = plain.router({
  conflict: plain.procedure.mutation(() => {
    plainCalls.conflict++;
    throw new TRPCError({
      code: "CONFLICT",
      message: "slug taken",
      cause: Object.assign(new Error("slug taken"), { reason: "unique_violation" }),
    });
  }),
  echo: plain.procedure.query(() => "echo"),
});

/** What reached the server, in order: enough to say which key each request carried. */
interface Seen {
  path: string;
  key: string | null;
  prefer: string | null;
  status: number;
  retryAfter: string | null;
  preferenceApplied: string | null;
}
const seen: Seen[] = [];
let server: HttpServer;

beforeAll(async () => {
  server = await serveFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const response = path.startsWith("/plain")
      ? await fetchRequestHandler({
          endpoint: "/plain",
          req,
          router: plainRouter,
          createContext: () => ({}),
        })
      : await fetchRequestHandler({
          endpoint: "/engine",
          req,
          router: testRouter,
          createContext: ({ req, resHeaders, info }) => ({
            db: t.db,
            headers: req.headers,
            resHeaders,
            batchSize: info.calls.length,
          }),
        });
    seen.push({
      path,
      key: req.headers.get("idempotency-key"),
      prefer: req.headers.get("prefer"),
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      preferenceApplied: response.headers.get("preference-applied"),
    });
    return response;
  });
});
afterAll(() => server.close());

let engine: Engine | undefined;
/**
 * An engine that can make a duplicate wait (`Prefer: wait`) for the first answer, up to
 * `maxWaitMs`.
 */
async function listeningEngine(maxWaitMs: number): Promise<void> {
  engine = configure(
    t.db,
    { maxWaitMs, leaseMs: 120_000 },
    { listen: () => new pg.Client({ connectionString: t.url }) },
  );
  await engine.ready;
}
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  configure(t.db);
});

/** `fetch` that loses the answers of the first `n` mutations after the server gave them in full. */
function losingFirst(n: number): typeof fetch {
  let toLose = n;
  return async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== "POST" || toLose <= 0) return response;
    toLose--;
    await response.arrayBuffer();
    throw new TypeError("fetch failed: the connection dropped on the way back");
  };
}

/**
 * The browser's wiring, as the README gives it: the link first, mutations unbatched, queries
 * batched.
 */
function engineClient(options: { lose?: number; link?: IdempotencyLinkOptions } = {}) {
  const url = `${server.url}/engine`;
  const auth = { authorization: "Bearer acme_token" };
  return createTRPCClient<typeof testRouter>({
    links: [
      idempotencyLink(options.link),
      splitLink({
        condition: (op) => op.type === "mutation",
        true: httpLink({
          url,
          headers: ({ op }) => ({ ...auth, ...idempotencyHeaders({ op }) }),
          fetch: losingFirst(options.lose ?? 0),
        }),
        false: httpBatchLink({ url, headers: auth }),
      }),
    ],
  });
}

function plainClient() {
  const url = `${server.url}/plain`;
  return createTRPCClient<typeof plainRouter>({
    links: [
      idempotencyLink(),
      splitLink({
        condition: (op) => op.type === "mutation",
        true: httpLink({ url, headers: idempotencyHeaders }),
        false: httpBatchStreamLink({ url }),
      }),
    ],
  });
}

const keysSentFor = (key: string) => seen.filter((s) => s.key === key);
const recorder = () => {
  const events: IdempotencyEvent[] = [];
  return { events, onIdempotencyEvent: (e: IdempotencyEvent) => events.push(e) };
};

describe("the link retries what got no final answer, with the same key", () => {
  it("a lost response: asks again with the same key and gets the first answer, replayed", async () => {
    const value = fresh("lost");
    const { events, onIdempotencyEvent } = recorder();
    const result = await engineClient({ lose: 1, link: { baseDelayMs: 1 } }).effect.mutate(
      { value },
      { context: { onIdempotencyEvent } },
    );

    const key = result.key;
    expect(keysSentFor(key).map((s) => s.status)).toEqual([200, 200]);
    expect(await effectsFor(t.db, value)).toBe(1);
    expect(events.map((e) => e.type)).toEqual(["attempt", "retry", "attempt", "answer"]);
    expect(events[1]).toMatchObject({ type: "retry", reason: "network", key });
    const answer = events.at(-1) as Extract<IdempotencyEvent, { type: "answer" }>;
    expect(answer).toMatchObject({ ok: true, key, replayed: true, attempts: 2 });
    // Idempotency-Key-Expires reaches the caller as a Date: a day ahead by default.
    expect(answer.expiresAt!.getTime() - Date.now()).toBeGreaterThan(23 * 3600_000);
  });

  it("409 request_in_progress: it said Prefer: wait, waited what Retry-After said, then got the first answer", async () => {
    await listeningEngine(1_000); // the server waits at most 1 s, then answers 409
    const key = fresh("busy");
    const value = fresh("v");
    const gate = new Gate();
    parkNextExecution(gate);
    const first = engineClient().effect.mutate({ value }, { context: { idempotencyKey: key } });
    await gate.reached;

    const delays: number[] = [];
    // The retry is held until the first request has answered: a retry that came too early would
    // get another 409, not the replay this test is about.
    const retryWhenFirstAnswered = (retry: () => void, ms: number) => {
      delays.push(ms);
      gate.open();
      void first.finally(retry);
    };
    const { events, onIdempotencyEvent } = recorder();
    const second = await engineClient({
      // No jitter drawn: the wait is exactly the server's word (its floor).
      link: { setTimeout: retryWhenFirstAnswered, random: () => 0 },
    }).effect.mutate({ value }, { context: { idempotencyKey: key, onIdempotencyEvent } });

    expect(second).toEqual(await first);
    expect(await effectsFor(t.db, value)).toBe(1);
    // In the order the server answered: the duplicate's 409, the first request, the retry.
    const [duplicate, firstRequest, retry] = keysSentFor(key);
    expect(duplicate).toMatchObject({
      status: 409,
      prefer: "wait=10",
      preferenceApplied: "wait=1",
    });
    expect([firstRequest!.status, retry!.status]).toEqual([200, 200]);
    expect(delays).toEqual([Number(duplicate!.retryAfter) * 1000]);
    expect(events.find((e) => e.type === "retry")).toMatchObject({
      reason: "request_in_progress",
      status: 409,
    });
    expect(events.at(-1)).toMatchObject({ type: "answer", ok: true, replayed: true, attempts: 2 });
  });

  it("gives up after maxAttempts with the caller's error", async () => {
    const value = fresh("gone");
    const error = await engineClient({ lose: 10, link: { maxAttempts: 3, baseDelayMs: 1 } })
      .effect.mutate({ value })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain("connection dropped");
    const info = idempotencyInfoOfError(error)!;
    expect(info).toMatchObject({ attempts: 3, replayed: false });
    expect(keysSentFor(info.key)).toHaveLength(3);
    expect(await effectsFor(t.db, value)).toBe(1); // three requests, one execution
  });
});

describe("the link never sends a final answer again", () => {
  it("a 409 for another reason (unique_violation) is sent once", async () => {
    const before = plainCalls.conflict;
    const error = (await plainClient()
      .conflict.mutate()
      .catch((e: unknown) => e)) as TRPCClientError<typeof plainRouter>;
    expect(error.data).toMatchObject({ httpStatus: 409, reason: "unique_violation" });
    expect(plainCalls.conflict - before).toBe(1);
    expect(idempotencyInfoOfError(error)).toMatchObject({ attempts: 1, replayed: false });
  });

  it("a deterministic 412 through the engine is final, and asking again with its key gets it replayed", async () => {
    const key = fresh("final");
    const input = { value: fresh("v"), mode: "deterministic" as const };
    const client = engineClient();
    const first = await client.effect
      .mutate(input, { context: { idempotencyKey: key } })
      .catch((e: unknown) => e);
    const again = await client.effect
      .mutate(input, { context: { idempotencyKey: key } })
      .catch((e: unknown) => e);
    expect(keysSentFor(key).map((s) => s.status)).toEqual([412, 412]);
    expect(idempotencyInfoOfError(first)).toMatchObject({ key, replayed: false, attempts: 1 });
    expect(idempotencyInfoOfError(again)).toMatchObject({ key, replayed: true, attempts: 1 });
  });
});

describe("one key per intent (what useIdempotency passes to the link)", () => {
  const send = (intent: IntentKeys, value: string, lose = 0) =>
    engineClient({ lose, link: { maxAttempts: 1 } }).effect.mutate(
      { value },
      { context: { idempotencyIntent: intent } },
    );

  it("pressing again after the link gave up sends the same key and gets the first answer; after it, a new key", async () => {
    const intent = createIntentKeys();
    const value = fresh("again");
    const gaveUp = await send(intent, value, 1).catch((e: unknown) => e);
    const key = idempotencyInfoOfError(gaveUp)!.key;
    expect(intent.pending()?.key).toBe(key); // no final answer: the intent is still open

    const answered = await send(intent, value);
    expect(answered.key).toBe(key);
    expect(await effectsFor(t.db, value)).toBe(1);
    expect(intent.pending()).toBeNull(); // a final answer closed it

    const onPurpose = await send(intent, value); // the same input again, on purpose: a new intent
    expect(onPurpose.key).not.toBe(key);
    expect(await effectsFor(t.db, value)).toBe(2);
  });

  it("a final error (412) ends the intent as a success does", async () => {
    const intent = createIntentKeys();
    const refused = await engineClient()
      .effect.mutate(
        { value: fresh("refused"), mode: "deterministic" },
        { context: { idempotencyIntent: intent } },
      )
      .catch((e: unknown) => e);
    expect(idempotencyInfoOfError(refused)).toMatchObject({ replayed: false, attempts: 1 });
    expect(intent.pending()).toBeNull();
  });

  it("a changed input is a new intent with a new key", async () => {
    const intent = createIntentKeys();
    const a = await send(intent, fresh("a"), 1).catch((e: unknown) => idempotencyInfoOfError(e)!);
    const b = await send(intent, fresh("b"));
    expect(b.key).not.toBe(a.key);
  });

  it("a double-click: two concurrent sends of one intent carry one key and run once", async () => {
    await listeningEngine(10_000);
    const intent = createIntentKeys();
    const value = fresh("double");
    const client = engineClient();
    const [a, b] = await Promise.all(
      [0, 1].map(() => client.effect.mutate({ value }, { context: { idempotencyIntent: intent } })),
    );
    expect(b).toEqual(a);
    expect(keysSentFor(a!.key)).toHaveLength(2);
    expect(await effectsFor(t.db, value)).toBe(1);
  });
});

describe("wiring", () => {
  it("queries pass by the link and stay batched, without a key", async () => {
    const before = seen.length;
    const client = plainClient();
    expect(await Promise.all([client.echo.query(), client.echo.query()])).toEqual(["echo", "echo"]);
    const requests = seen.slice(before);
    expect(requests).toHaveLength(1); // one batch for both
    expect(requests[0]!.key).toBeNull();
  });

  it("a mutation put on a batching link fails with an error that says how to wire it", async () => {
    const url = `${server.url}/plain`;
    const withHeaders = createTRPCClient<typeof plainRouter>({
      links: [idempotencyLink(), httpBatchLink({ url, headers: idempotencyHeaders })],
    });
    const refused = await withHeaders.conflict.mutate().catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/batching link.*httpLink/);
    expect(idempotencyInfoOfError(refused)?.attempts).toBe(1); // a wiring mistake is not retried

    const engineUrl = `${server.url}/engine`;
    const withoutHeaders = createTRPCClient<typeof testRouter>({
      links: [
        idempotencyLink(),
        httpBatchLink({ url: engineUrl, headers: { authorization: "Bearer acme_token" } }),
      ],
    });
    await expect(withoutHeaders.effect.mutate({ value: fresh("batched") })).rejects.toThrow(
      /idempotencyHeaders/,
    );
  });
});
