// The body read straight from the socket, on a real node:http server and real client sockets: whole
// when it comes whole (declared or chunked), refused before a byte is read when its declared length
// is over the limit, abandoned just past the limit when it streams, given up at the deadline, and
// nothing to answer when the client leaves mid-body.
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TimedBody } from "../../http/body-limit";
import { holdBody } from "./node-body";

const LIMIT = 64 * 1024;
/** Short, so the deadline's test waits a moment; the door's own is body-limit.ts's 10 s. */
const DEADLINE_MS = 300;

interface Read {
  outcome: TimedBody | undefined;
  /** How long after the request's headers the read settled, in ms. */
  tookMs: number;
  /** The bytes the server's socket had received when the read settled. */
  bytesRead: number;
}

let server: http.Server;
let port: number;
/** Each request's read, by the name its `x-read` header gives it. */
const reads = new Map<string, (read: Read) => void>();
const readOf = (name: string) => new Promise<Read>((resolve) => reads.set(name, resolve));

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const started = performance.now();
    const report = reads.get(String(req.headers["x-read"]));
    void holdBody(req, LIMIT, DEADLINE_MS).then((outcome) => {
      const took = performance.now() - started;
      report?.({ outcome, tookMs: took, bytesRead: req.socket.bytesRead });
      if (outcome) res.writeHead(outcome.ok ? 200 : 400, { connection: "close" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A raw socket that sends `head` (a request's start line and headers) and then `body`. */
function raw(head: string, body = ""): net.Socket {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {}); // the server may close it first: that is the point
  socket.write(`${head}\r\n\r\n${body}`);
  return socket;
}
/** A POST's head, named `read` (the test awaits readOf(read)). */
const post = (read: string, headers: string) =>
  `POST /api/trpc/checkout.placeOrder HTTP/1.1\r\nHost: localhost\r\nX-Read: ${read}\r\n${headers}`;

describe("holdBody", () => {
  it("reads a declared body whole, and a chunked one sent in pieces", async () => {
    const body = JSON.stringify({ items: [{ productId: "p", quantity: 1 }] });
    const declared = readOf("declared");
    raw(post("declared", `Content-Length: ${body.length}`), body).end();
    const read = await declared;
    expect(read.outcome?.ok && Buffer.from(read.outcome.bytes).toString()).toBe(body);

    const pieces = ['{"items":', "[]", "}"];
    const chunked = readOf("chunked");
    const socket = raw(post("chunked", "Transfer-Encoding: chunked"));
    for (const piece of pieces) socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    socket.end("0\r\n\r\n");
    const whole = await chunked;
    expect(whole.outcome?.ok && Buffer.from(whole.outcome.bytes).toString()).toBe(pieces.join(""));
  });

  it("refuses a declared length over the limit at once, before the body is sent", async () => {
    const refused = readOf("declared over");
    const socket = raw(post("declared over", `Content-Length: ${10 * LIMIT}`));
    const read = await refused;
    expect(read.outcome).toEqual({ ok: false, limitBytes: LIMIT });
    expect(read.tookMs).toBeLessThan(DEADLINE_MS); // not the deadline: nothing was waited for
    socket.destroy();
  });

  it("settles once a chunked body passes the limit, without waiting for the rest", async () => {
    const refused = readOf("chunked over");
    const socket = raw(post("chunked over", "Transfer-Encoding: chunked"));
    const chunk = "x".repeat(16 * 1024);
    // 4x the limit, if the server kept reading; it answers and closes once past the limit.
    for (let i = 0; i < 16; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const read = await refused;
    expect(read.outcome).toEqual({ ok: false, limitBytes: LIMIT });
    expect(read.bytesRead).toBeLessThan(16 * chunk.length);
    socket.destroy();
  });

  it("gives up on a body that does not arrive by the deadline, not before it", async () => {
    const timedOut = readOf("slow");
    const socket = raw(post("slow", "Content-Length: 4096"), "{");
    const read = await timedOut;
    expect(read.outcome).toEqual({ ok: false, timedOutMs: DEADLINE_MS });
    expect(read.tookMs).toBeGreaterThanOrEqual(DEADLINE_MS - 1); // timers may fire 1 ms early
    socket.destroy();
  });

  it("has no one to answer when the client leaves mid-body", async () => {
    const gone = readOf("gone");
    const socket = raw(post("gone", "Content-Length: 4096"), "{");
    // Closed once the server reads its body: its first byte is in when the socket has sent it and
    // the server has answered a request sent after it on another connection.
    const later = readOf("later");
    raw(post("later", "Content-Length: 2"), "{}").end();
    expect((await later).outcome?.ok).toBe(true);
    socket.destroy();
    const read = await gone;
    expect(read.outcome).toBeUndefined();
    expect(read.tookMs).toBeLessThan(DEADLINE_MS);
  });
});
