// The checkout's floor: the same protected checkout as `checkout.placeOrder`, written by hand on a
// bare node:http server with a pg pool. Same statements in the same order (the token's lookup, the
// key's reservation, BEGIN, the order's statement (the very text checkout runs, from
// src/server/checkout/order-statement.ts), the key's completion with its NOTIFY, COMMIT), all
// prepared; the same fingerprint (SHA-256 of the canonical input), the same JSON answer, the same
// outbox row for the payment worker to charge. No framework, no ORM, no middleware: what this
// machine does with these statements. bench:http runs it beside the app as `npm start` runs it and
// gives every figure as a ratio to it; bench:overload's crowd and slow-body benches put it under
// the same clients and attackers as the app. Only the path the benches drive is written: a new key
// that executes, a completed key's replay, a key in progress (409), and catalog.list's one SELECT.
// Against slow clients it has the app's doors, by hand: the front door's header and request
// timeouts (src/server/edge/front-door.ts), and the API's byte limit and body deadline
// (src/http/body-limit.ts), answered 413 and 408 in tRPC's error shape with the connection
// closed. Without them a slow-body attacker's sockets would sit on the floor for Node's default
// five minutes instead of being answered and opened again every 10 s, and the floor would be
// spared the churn the app pays.
// On PRISMA_FLOOR_PATH the same checkout runs its transaction (the order and the completion)
// through a Prisma interactive transaction on the app's client (createDb: the pg adapter, named
// statements), as the design gives the handler one: the floor of any checkout on that stack.
// Run as a child process: `node --import tsx lab/bench/http/floor-server.ts` with DATABASE_URL
// and PORT.
import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import pg from "pg";
import { canonicalJson } from "@once/idempotency/sql";
import { SETTLED_CHANNEL } from "@once/idempotency/operator";
import { PAYMENT_TOPIC, providerKeyFor } from "../../../src/payments";
import {
  ORDER_STATEMENT,
  orderItemsOf,
  orderStatementValues,
  writtenOrderOf,
  type WrittenRow,
} from "../../../src/server/checkout/order-statement";
import { mergeLines } from "../../../src/server/checkout/input";
import { CATALOG_LIST_SQL } from "../../../src/server/catalog/list-statement";
import { createDb } from "../../../src/server/db/client";
import {
  CONNECTIONS_CHECK_MS,
  HEADERS_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
} from "../../../src/server/edge/front-door";
import { BODY_READ_DEADLINE_MS, TRPC_BODY_LIMIT_BYTES } from "../../../src/http/body-limit";
import { PRISMA_FLOOR_PATH } from "./floor-paths";

const PROCEDURE = "checkout.placeOrder";
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  connectionTimeoutMillis: 2_000,
});
pool.on("error", () => {});

const q = <T extends pg.QueryResultRow>(
  client: pg.Pool | pg.PoolClient,
  name: string,
  text: string,
  values: unknown[],
) => client.query<T>({ name: `floor_${name}`, text, values });

const PRINCIPAL = `SELECT u."id", u."tenantId" FROM "ApiToken" t JOIN "User" u ON u."id" = t."userId" WHERE t."tokenHash" = $1`;
const RESERVE = `
  WITH "cfg" AS (SELECT set_config('synchronous_commit', 'off', true)),
  "inserted" AS (
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT $1, $2, $3, $4, 'PROCESSING', $5::uuid, now() + interval '30 seconds', now() + interval '1 day' FROM "cfg"
    ON CONFLICT ("scope", "key") DO NOTHING
    RETURNING "id", true AS "inserted", "fingerprint", "status"::text AS "status", "responseStatus", "responseBody")
  SELECT * FROM "inserted"
  UNION ALL
  SELECT "id", false, "fingerprint", "status"::text, "responseStatus", "responseBody" FROM "IdempotencyKey"
  WHERE "scope" = $1 AND "key" = $2 AND NOT EXISTS (SELECT 1 FROM "inserted")`;
const FINISH = `
  WITH "done" AS (
    UPDATE "IdempotencyKey" SET "status" = 'COMPLETED', "responseStatus" = 200, "responseBody" = $3, "responseContentType" = 'application/json',
      "completedAt" = now(), "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
    WHERE "scope" = $4 AND "key" = $5 AND "id" = $1::uuid AND "leaseToken" = $2::uuid RETURNING "scope", "key", "awaited")
  SELECT 1 AS "n" FROM "done"
  LEFT JOIN LATERAL (SELECT pg_notify('${SETTLED_CHANNEL}', json_build_array("done"."scope", "done"."key")::text) WHERE "done"."awaited") AS "sent" ON true`;

interface Line {
  productId: string;
  quantity: number;
}

function answer(
  res: http.ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

type Answer = { status: number; body: string; headers?: Record<string, string> };
type User = { id: string; tenantId: string };

/** The key's row as RESERVE returns it: this request's reservation, or the key already there. */
type Held = {
  id: string;
  inserted: boolean;
  fingerprint: string;
  status: string;
  responseStatus: number | null;
  responseBody: string | null;
};

const IN_PROGRESS: Answer = {
  status: 409,
  body: '{"error":"request_in_progress"}',
  headers: { "retry-after": "1" },
};

/** The token's user, looked up by its hash as the app's context does. */
async function principalOf(token: string): Promise<User | undefined> {
  const [user] = (
    await q<User>(pool, "principal", PRINCIPAL, [createHash("sha256").update(token).digest("hex")])
  ).rows;
  return user;
}

/**
 * The answer when the key was not this request's to execute: no row (its holder's insert not yet
 * visible), another input under the key, a key still in progress, or the completed key's replay.
 * Null when RESERVE inserted the key for this request.
 */
function answerFromHeld(held: Held | undefined, print: string): Answer | null {
  if (!held) return IN_PROGRESS;
  if (held.inserted) return null;
  if (held.fingerprint !== print)
    return { status: 422, body: '{"error":"idempotency_key_reused"}' };
  if (held.status === "PROCESSING") return IN_PROGRESS;
  return {
    status: held.responseStatus!,
    body: held.responseBody!,
    headers: { "idempotent-replayed": "true" },
  };
}

type Reserved = { id: string; lease: string };

/** The order statement's values for this checkout (with its outbox row). */
const orderValues = (user: User, key: string, items: Line[]) =>
  orderStatementValues({
    tenantId: user.tenantId,
    userId: user.id,
    checkoutKey: key,
    lines: mergeLines(items),
    outbox: { topic: PAYMENT_TOPIC, idempotencyKey: providerKeyFor(user.tenantId, key) },
  });

/** The answer the checkout stores and sends, from the order statement's rows. */
function answerOf(rows: WrittenRow[]): string {
  const { priced, order } = writtenOrderOf(rows);
  return JSON.stringify({ result: { data: { order: { ...order, items: orderItemsOf(priced) } } } });
}

/**
 * The order and the key's completion in one transaction, as the engine commits them together:
 * the order's statement (with its outbox row), then FINISH with the answer it stores.
 */
async function placeOrder(
  user: User,
  key: string,
  items: Line[],
  reserved: Reserved,
): Promise<Answer> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const rows = await q<WrittenRow>(
      client,
      "order",
      ORDER_STATEMENT,
      orderValues(user, key, items),
    );
    const body = answerOf(rows.rows);
    await q(client, "finish", FINISH, [reserved.id, reserved.lease, body, user.tenantId, key]);
    await client.query("COMMIT");
    return { status: 200, body };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The app's Prisma client, for the checkout whose transaction is Prisma's (PRISMA_FLOOR_PATH). */
const db = createDb(process.env.DATABASE_URL!, { max: 10 });

/** placeOrder's transaction through Prisma's interactive transaction: the same two statements. */
async function placeOrderInPrisma(
  user: User,
  key: string,
  items: Line[],
  reserved: Reserved,
): Promise<Answer> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<WrittenRow[]>(
      ORDER_STATEMENT,
      ...orderValues(user, key, items),
    );
    const body = answerOf(rows);
    await tx.$queryRawUnsafe(FINISH, reserved.id, reserved.lease, body, user.tenantId, key);
    return { status: 200, body };
  });
}

/** The protected checkout: principal, fingerprint, reservation, then the order if it is ours. */
async function checkout(
  token: string,
  key: string,
  rawBody: string,
  place = placeOrder,
): Promise<Answer> {
  const user = await principalOf(token);
  if (!user) return { status: 401, body: '{"error":"unauthorized"}' };
  const input = JSON.parse(rawBody) as { items: Line[] };
  const print = createHash("sha256")
    .update(canonicalJson({ procedure: PROCEDURE, input }))
    .digest("hex");
  const lease = randomUUID();
  const [held] = (
    await q<Held>(pool, "reserve", RESERVE, [user.tenantId, key, PROCEDURE, print, lease])
  ).rows;
  const answered = answerFromHeld(held, print);
  if (answered) return answered;
  return place(user, key, input.items, { id: held!.id, lease });
}

/**
 * catalog.list by hand: the app's one SELECT for it (the very text), prepared, answered in tRPC's
 * shape. What bare node:http + pg spend on a read of one statement, for the route costs' catalog
 * read to be judged by.
 */
async function catalog(): Promise<string> {
  const { rows } = await q(pool, "catalog", CATALOG_LIST_SQL, []);
  return JSON.stringify({ result: { data: rows } });
}

/** The body's refusals in tRPC's error shape, as the app's handler words them (body-limit.ts). */
const TIMED_OUT = JSON.stringify({
  error: {
    message: `The request body did not arrive within ${BODY_READ_DEADLINE_MS / 1000} s; nothing was executed`,
    code: -32008,
    data: { code: "TIMEOUT", httpStatus: 408, reason: "request_timeout" },
  },
});
const TOO_LARGE = JSON.stringify({
  error: {
    message: `The request body is larger than ${TRPC_BODY_LIMIT_BYTES} bytes`,
    code: -32600,
    data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, reason: "payload_too_large" },
  },
});

const server = http.createServer(
  {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
  },
  (req, res) => {
    // A refused body is read no further and its connection closes with the answer: the client
    // gets no second request on a socket it was trickling into.
    if (Number(req.headers["content-length"]) > TRPC_BODY_LIMIT_BYTES)
      return answer(res, 413, TOO_LARGE, { connection: "close" });
    const chunks: Buffer[] = [];
    let size = 0;
    const refuse = (status: number, body: string) => {
      clearTimeout(deadline);
      req.removeListener("data", onData).removeListener("end", onEnd);
      answer(res, status, body, { connection: "close" });
    };
    const onData = (c: Buffer) => {
      size += c.byteLength;
      if (size > TRPC_BODY_LIMIT_BYTES) refuse(413, TOO_LARGE);
      else chunks.push(c);
    };
    const onEnd = () => {
      clearTimeout(deadline);
      route(req, res, chunks);
    };
    // One timer a request with a body, from its arrival, cleared at its end. A GET or HEAD gets
    // none, as in the app (body-limit.ts reads no body for them), so bench:http's reads by hand
    // cost what they did. A request its client abandons keeps its timer until it fires, into a
    // closed socket (which writes nothing).
    const deadline =
      req.method === "GET" || req.method === "HEAD"
        ? undefined
        : setTimeout(() => refuse(408, TIMED_OUT), BODY_READ_DEADLINE_MS);
    req.on("data", onData).on("end", onEnd);
  },
);

/** The request, its body in, to its route. */
function route(req: http.IncomingMessage, res: http.ServerResponse, chunks: Buffer[]): void {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  const key = req.headers["idempotency-key"];
  if (req.url === "/api/health") return answer(res, 200, '{"status":"up"}');
  if (req.url === "/api/trpc/catalog.list")
    return void catalog().then(
      (body) => answer(res, 200, body),
      () => answer(res, 503, '{"error":"store_unavailable"}', { "retry-after": "1" }),
    );
  if (!token || typeof key !== "string") return answer(res, 400, '{"error":"bad_request"}');
  const place = req.url === PRISMA_FLOOR_PATH ? placeOrderInPrisma : placeOrder;
  checkout(token, key, Buffer.concat(chunks).toString("utf8"), place).then(
    (a) => answer(res, a.status, a.body, a.headers),
    () => answer(res, 503, '{"error":"store_unavailable"}', { "retry-after": "1" }),
  );
}
server.listen(Number(process.env.PORT), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  void Promise.all([pool.end(), db.$disconnect()]).then(() => process.exit(0));
});
