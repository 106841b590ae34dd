// Calls the real tRPC HTTP handler in-process, against a test database: status codes, headers and
// bodies exactly as a client on the wire sees them, without starting a server.
import { handleTrpcRequest } from "../server/api/handler";
import type { Db } from "../server/db/client";
import { testApp } from "./app";

export interface HttpAnswer<T = unknown> {
  status: number;
  headers: Headers;
  json: T;
}

export async function callTrpc<T = any>(
  db: Db,
  options: {
    path: string;
    input?: unknown;
    token?: string;
    /** The Idempotency-Key header, sent exactly as given. */
    key?: string;
    headers?: Record<string, string>;
    method?: "GET" | "POST";
  },
): Promise<HttpAnswer<T>> {
  const method =
    options.method ??
    (options.input === undefined || options.path.includes("list") || options.path.includes("byId")
      ? "GET"
      : "POST");
  const headers = new Headers(options.headers);
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  if (options.key !== undefined) headers.set("idempotency-key", options.key);
  let url = `http://localhost/api/trpc/${options.path}`;
  let body: string | undefined;
  if (method === "GET") {
    if (options.input !== undefined)
      url += `?input=${encodeURIComponent(JSON.stringify(options.input))}`;
  } else {
    headers.set("content-type", "application/json");
    body = JSON.stringify(options.input ?? null);
  }
  const req = new Request(url, { method, headers, body });
  const res = await handleTrpcRequest(req, testApp(db));
  return { status: res.status, headers: res.headers, json: (await res.json()) as T };
}

export const TOKENS = {
  acme: "acme_demo_token",
  globex: "globex_demo_token",
  admin: "admin_demo_token",
} as const;

/**
 * The operator's calls, asserting success: `query` returns `result.data`, `mutate` the raw answer.
 */
export function adminCalls(db: () => Db) {
  return {
    query: async <T = any>(
      path: string,
      input?: unknown,
      token: string = TOKENS.admin,
    ): Promise<T> => {
      const res = await callTrpc<{ result: { data: T } }>(db(), {
        path,
        input,
        token,
        method: "GET",
      });
      if (res.status !== 200)
        throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.json)}`);
      return res.json.result.data;
    },
    mutate: (path: string, input: unknown, key: string = crypto.randomUUID()) =>
      callTrpc(db(), { path, input, token: TOKENS.admin, key, method: "POST" }),
  };
}

/** A request exactly as given (any method, URL, body), answered as text. */
export async function callRaw(
  db: Db,
  options: { url: string; method: string; body?: string; token?: string; key?: string },
): Promise<{ status: number; headers: Headers; text: string }> {
  const headers = new Headers({ "content-type": "application/json" });
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  if (options.key !== undefined) headers.set("idempotency-key", options.key);
  const req = new Request(options.url, { method: options.method, headers, body: options.body });
  const res = await handleTrpcRequest(req, testApp(db));
  return { status: res.status, headers: res.headers, text: await res.text() };
}
