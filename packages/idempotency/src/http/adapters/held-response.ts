// What a handler writes to Node's ServerResponse (Express's `res.json`, `res.send`,
// `res.status(…).end`, NestJS replying through Express), held back instead of sent: the key must
// settle before the client sees the answer. The held answer becomes a Fetch Response for the HTTP
// layer's edge, and what the edge answers is then written for real (writeResponse, node.ts).
import type { ServerResponse } from "node:http";
import { responseFrom } from "../answer.js";
import { writeResponse } from "../node.js";

type Callback = (error?: Error | null) => void;
type Methods = Pick<ServerResponse, "writeHead" | "write" | "end" | "flushHeaders">;

export interface HeldResponse {
  /** The answer, once the handler ends it; rejects if the client goes before it does. */
  answer: Promise<Response>;
  /** Writes `response` for real: the handler's writes are let through again, its headers unset. */
  send(response: Response): Promise<void>;
}

const HELD = ["writeHead", "write", "end", "flushHeaders"] as const;

/** Holds what is written to `res` from now on, until `send`. */
export function holdResponse(res: ServerResponse): HeldResponse {
  const before = new Set(res.getHeaderNames());
  const own = HELD.map((name) => [name, Object.getOwnPropertyDescriptor(res, name)] as const);
  let settle!: { resolve: (r: Response) => void; reject: (e: Error) => void };
  const answer = new Promise<Response>((resolve, reject) => (settle = { resolve, reject }));
  const gone = () => settle.reject(new Error("The client closed the connection before the answer"));
  res.once("close", gone);
  Object.assign(
    res,
    heldMethods(res, (bytes) =>
      settle.resolve(responseFrom(res.statusCode, res.getHeaders(), new Uint8Array(bytes))),
    ),
  );
  return {
    answer,
    async send(response) {
      res.off("close", gone);
      for (const [name, previous] of own) {
        if (previous) Object.defineProperty(res, name, previous);
        else delete (res as Partial<Methods>)[name];
      }
      for (const name of res.getHeaderNames()) if (!before.has(name)) res.removeHeader(name);
      await writeResponse(response, res);
    },
  };
}

/** Methods that keep what is written (status and headers on `res`, chunks here), sending nothing. */
function heldMethods(res: ServerResponse, ended: (bytes: Buffer) => void): Methods {
  const chunks: Buffer[] = [];
  const methods = {
    writeHead(status: number, ...rest: unknown[]) {
      res.statusCode = status;
      const headers = rest.find((arg) => typeof arg === "object" && arg !== null);
      if (Array.isArray(headers))
        for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i], headers[i + 1]);
      else for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
      return res;
    },
    write(chunk: unknown, ...rest: unknown[]) {
      if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, rest[0]));
      (rest.find((arg) => typeof arg === "function") as Callback | undefined)?.();
      return true;
    },
    end(...args: unknown[]) {
      const chunk = typeof args[0] === "function" ? undefined : args[0];
      if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, args[1]));
      ended(Buffer.concat(chunks));
      return res;
    },
    flushHeaders() {},
  };
  return methods as unknown as Methods;
}

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (typeof chunk === "string")
    return Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  return Buffer.from(chunk as Uint8Array);
}
