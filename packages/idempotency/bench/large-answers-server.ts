// The server of large-answers.ts, in a process of its own so that its memory is measured alone.
// Its argument, the mode: "protected" (the idempotent route, through toNodeHandler), "plain" (the same handler with
// no idempotency: the floor) or "buffered" (protected, but the handler's body read whole first:
// what the layer did before it streamed). Prints its port when it listens.
import { createServer } from "node:http";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { createIdempotencyEngine } from "../src/index";
import { idempotent, toNodeHandler, type FetchHandler } from "../src/http/index";
import { PrismaClient } from "../test/support/generated/client";

const MODE = process.argv[2] ?? "protected";
const CHUNK = new Uint8Array(64 * 1024).fill(120);

/** An answer of `size` bytes made as it is sent (a file, an export): never whole in memory. */
function streamedAnswer(size: number): Response {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= size) return controller.close();
      const part = Math.min(CHUNK.byteLength, size - sent);
      sent += part;
      controller.enqueue(part === CHUNK.byteLength ? CHUNK : CHUNK.subarray(0, part));
    },
  });
  return new Response(body, {
    headers: { "content-type": "application/octet-stream", "content-length": String(size) },
  });
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
const engine = createIdempotencyEngine({ prisma, pool });

const handler: FetchHandler = async (request) => {
  const size = Number(new URL(request.url).searchParams.get("bytes"));
  if (MODE !== "buffered") return streamedAnswer(size);
  const bytes = await streamedAnswer(size).arrayBuffer();
  return new Response(bytes, { headers: { "content-type": "application/octet-stream" } });
};
const route: FetchHandler =
  MODE === "plain" ? handler : idempotent(handler, { engine, scope: () => "bench" });

const server = createServer((req, res) => void toNodeHandler(route)(req, res));
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(typeof address === "object" && address ? address.port : "");
});
