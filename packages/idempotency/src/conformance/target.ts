// What an adopting app tells the conformance kit about its protected procedure.
import pg from "pg";
import { EVICTION_CHANNEL } from "../constants.js";

export interface Answer {
  status: number;
  headers: Headers;
  /** The body's exact text. */
  body: string;
}

export interface SendOptions {
  /** The Idempotency-Key header exactly as sent; undefined sends none. */
  key?: string;
  input: unknown;
  /** Which of the two callers sends: each has its own scope. */
  caller?: 0 | 1;
  headers?: Record<string, string>;
}

export interface ConformanceTarget {
  /** A name for the suite's title. */
  name: string;
  /** Sends one request to the protected mutation, as a client would. */
  send(options: SendOptions): Promise<Answer>;
  /** A fresh, valid input: each call a new request with its own effect. */
  input(): unknown;
  /** The same operation with other input (must be a different request: 422 under a used key). */
  otherInput(input: unknown): unknown;
  /** How many effects the request under `key` by `caller` made (rows in your business table). */
  effects(key: string, caller?: 0 | 1): Promise<number>;
  /** The key scopes of the two callers, as the engine stores them. */
  scopes: [string, string];
  /** A connection string to the database holding the key table (the kit ages keys there). */
  databaseUrl: string;
  /** An input your handler refuses deterministically (a 4xx it throws on purpose). */
  failingInput?: () => unknown;
  /** Headers that make the handler take at least ~2 s (in-flight and takeover checks). */
  slowHeaders?: Record<string, string>;
  /**
   * Your router's transformer (e.g. superjson), if it has one: inputs are sent through it and
   * error bodies read through it. Give trpcSender the same.
   */
  transformer?: Transformer;
  /**
   * Called after the kit aged a key in the database and announced it on the engine's eviction
   * channel. The kit waits for its own copy of the notice; the server hears it on its own
   * connection, and nothing orders the two. A server in its own process has in practice heard it
   * before the next request reaches it; a handler called in the test's own process can be reached
   * first, so give such a target `aged: () => engine.caughtUp()`.
   */
  aged?: (scope: string, key: string) => void | Promise<void>;
  /** Stop and start the database, for the fail-closed check (both or neither). */
  stopStore?: () => Promise<void>;
  startStore?: () => Promise<void>;
}

/** A tRPC data transformer, either form tRPC accepts (superjson itself, or `{ input, output }`). */
export type Transformer =
  | { serialize(value: unknown): unknown; deserialize(value: unknown): unknown }
  | {
      input: { serialize(value: unknown): unknown };
      output: { deserialize(value: unknown): unknown };
    };

/** What a client sends for `value` through `transformer` (plain JSON without one). */
export function serializeInput(transformer: Transformer | undefined, value: unknown): unknown {
  const input = transformer && "input" in transformer ? transformer.input : transformer;
  return input ? input.serialize(value) : value;
}

/** What a client reads from an answer's `value` through `transformer`. */
export function deserializeOutput(transformer: Transformer | undefined, value: unknown): unknown {
  const output = transformer && "output" in transformer ? transformer.output : transformer;
  return output ? output.deserialize(value) : value;
}

/** Sends to a tRPC mutation at `url` (e.g. http://127.0.0.1:3000/api/trpc/orders.place). */
export function trpcSender(options: {
  url: string;
  /** Headers per caller (authentication). */
  callers: [Record<string, string>, Record<string, string>];
  fetch?: (request: Request) => Promise<Response>;
  /** Your router's transformer (e.g. superjson), if it has one. */
  transformer?: Transformer;
}): ConformanceTarget["send"] {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  return async ({ key, input, caller = 0, headers }) => {
    const h = new Headers({
      ...options.callers[caller],
      ...headers,
      "content-type": "application/json",
    });
    if (key !== undefined) h.set("Idempotency-Key", key);
    const res = await send(
      new Request(options.url, {
        method: "POST",
        headers: h,
        body: JSON.stringify(serializeInput(options.transformer, input)),
      }),
    );
    return { status: res.status, headers: res.headers, body: await res.text() };
  };
}

/**
 * Sends to a plain route protected by @once/idempotency/http (a JSON POST, as trpcSender without a
 * transformer).
 */
export function httpSender(options: {
  url: string;
  /** Headers per caller (authentication). */
  callers: [Record<string, string>, Record<string, string>];
  fetch?: (request: Request) => Promise<Response>;
}): ConformanceTarget["send"] {
  return trpcSender(options);
}

/**
 * One connection for the length of a callback, closed whatever the callback did: the kit's direct
 * access to the key table (to age a key as time would). No Vitest in this module: an app's
 * Playwright specs may use it too.
 */
export async function withDatabase<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface KeyState {
  status: string;
  attempts: number;
}

export async function keyState(url: string, scope: string, key: string): Promise<KeyState | null> {
  return withDatabase(url, async (c) => {
    const { rows } = await c.query<KeyState>(
      `SELECT "status"::text AS "status", "attempts" FROM "IdempotencyKey" WHERE "scope" = $1 AND "key" = $2`,
      [scope, key],
    );
    return rows[0] ?? null;
  });
}

/**
 * As if time passed: the key's lease ("lease") or its retention ("retention") ended a second ago.
 * A finished key's answer may sit in the server's replay cache, which time would not have filled:
 * the change is announced on the engine's eviction channel in the same transaction, as an
 * operator's bust is, and the kit returns once that notice has been delivered to listeners (it
 * hears its own), so the server's listener, which got it in the same moment, has it before the
 * next request reaches the server.
 */
export async function age(
  url: string,
  scope: string,
  key: string,
  what: "lease" | "retention",
): Promise<void> {
  const column = what === "lease" ? "leaseExpiresAt" : "expiresAt";
  const payload = JSON.stringify([scope, key]);
  await withDatabase(url, async (c) => {
    const delivered = new Promise<void>((resolve) =>
      c.on("notification", (m) => m.payload === payload && resolve()),
    );
    await c.query(`LISTEN ${EVICTION_CHANNEL}`);
    await c.query("BEGIN");
    await c.query(
      `UPDATE "IdempotencyKey" SET "${column}" = now() - interval '1 second' WHERE "scope" = $1 AND "key" = $2`,
      [scope, key],
    );
    await c.query("SELECT pg_notify($1, $2)", [EVICTION_CHANNEL, payload]);
    await c.query("COMMIT");
    await delivered;
  });
}
