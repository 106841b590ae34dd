// A request's body read straight from the socket (node:http), under the same byte limit and
// deadline the API routes apply to a Fetch Request's body (body-limit.ts). The front door reads an
// API body this way before it builds the Request its handler gets: one Request, made once the
// body is in and holding its bytes, where reading a streamed one and handing on a second made
// three objects, two abort signals and a stream for every POST. A socket still sending its body,
// however slowly, costs a few listeners and one timer until it is answered.
import type http from "node:http";
import type { TimedBody } from "../../http/body-limit";

/**
 * The body if it is whole within `limitBytes` and `deadlineMs`; otherwise why it is not (the same
 * answers as body-limit.ts's readers give), or undefined when the client left before it was in
 * (there is no one to answer). A declared Content-Length over the limit is refused before a byte
 * is read. Once it resolves, the request's data is no longer listened to.
 */
export function readNodeBody(
  req: http.IncomingMessage,
  limitBytes: number,
  deadlineMs: number,
): Promise<TimedBody | undefined> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes)
    return Promise.resolve({ ok: false, limitBytes });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: TimedBody | undefined) => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      req.off("error", onClose);
      // A body given up on waits in the socket, unread, until the answer closes the connection.
      if (!outcome?.ok) req.pause();
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      // Whatever the client sends, at most `limitBytes` (and the chunk that crossed it) is held.
      if (size > limitBytes) finish({ ok: false, limitBytes });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, bytes: Buffer.concat(chunks, size) });
    // Node reports a client gone mid-body as "close" without "end" (or as an error).
    const onClose = () => finish(undefined);
    const timer = setTimeout(() => finish({ ok: false, timedOutMs: deadlineMs }), deadlineMs);
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
    req.once("error", onClose);
  });
}
