// One HTTP exchange with the load balancer, over node:http so the client can do what a flaky
// network does: send the whole request, then drop the connection before the answer is read.
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface Exchange {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type ExchangeResult =
  { kind: "answer"; answer: Exchange } | { kind: "dropped" } | { kind: "error"; message: string };

export interface ExchangeRequest {
  port: number;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * Drop the connection this many ms after the request was sent (or at the first byte of the
   * answer).
   */
  dropAfterMs?: number;
  timeoutMs: number;
}

export function exchange(r: ExchangeRequest): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: ExchangeResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const req = http.request({
      host: "127.0.0.1",
      port: r.port,
      method: r.method,
      path: r.path,
      headers: r.headers,
      agent,
      timeout: r.timeoutMs,
    });
    const drop = () => {
      req.destroy();
      settle({ kind: "dropped" });
    };
    req.on("finish", () => {
      if (r.dropAfterMs !== undefined) setTimeout(drop, r.dropAfterMs).unref();
    });
    req.on("response", (res) => {
      if (r.dropAfterMs !== undefined) return drop();
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        settle({
          kind: "answer",
          answer: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          },
        }),
      );
      res.on("error", (e) => settle({ kind: "error", message: e.message }));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${r.timeoutMs} ms`)));
    req.on("error", (e) => settle({ kind: "error", message: e.message }));
    req.end(r.body);
  });
}

/** Retry-After in seconds (an integer ≥ 0), or undefined. */
export function retryAfterSeconds(headers: http.IncomingHttpHeaders): number | undefined {
  const raw = headers["retry-after"];
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
