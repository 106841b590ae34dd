// A request's body read at the door straight from the socket (node:http), under a byte limit and
// the body deadline, before anything else is done with the request: the direct API routes get its
// bytes in the one Request the door builds (the same answers body-limit.ts's readers give a Fetch
// Request's body); every other route (a page, a session form) gets it from Next.js, which reads a
// page's body whole whatever its size (a 100 MB POST to `/` was read to its end), once the door
// has handed it on. A declared Content-Length over the limit is refused before a byte is read, an
// undeclared one is counted as it streams and refused the moment it passes the limit, and a body
// not in by the deadline is refused: whatever the client sends, at most the limit is held, and a
// socket still sending its body, however slowly, costs a few listeners and one timer.
//
// Held, not read: node:http pushes each chunk of the body into the request (a Readable) as it
// parses it; the door takes those pushes until the body ends, then (release) pushes the bytes and
// the end on to the request, which Next.js reads as before. Nothing of Node's own reading changes.
import type http from "node:http";
import type { TimedBody } from "../../http/body-limit";

/** The body as held: whole (its bytes, and `release` to hand it on to the request), or why not. */
export type HeldBody =
  (Extract<TimedBody, { ok: true }> & { release: () => void }) | Exclude<TimedBody, { ok: true }>;

/** True when the request carries a body (a declared length above 0, or a transfer coding). */
export function hasBody(req: http.IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const declared = req.headers["content-length"];
  return declared !== undefined && Number(declared) !== 0;
}

type Push = (chunk: unknown, encoding?: BufferEncoding) => boolean;

/**
 * Holds the request's body until it is whole within `limitBytes` and `deadlineMs`; or resolves
 * with why not, the rest of the body then left in the request (unread: the answer lingers,
 * lingering-close.ts); or with undefined when the client left first. Call as the request arrives,
 * before any await: the chunks that came with its headers are pushed right after the request's
 * handler returns.
 */
export function holdBody(
  req: http.IncomingMessage,
  limitBytes: number,
  deadlineMs: number,
): Promise<HeldBody | undefined> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes)
    return Promise.resolve({ ok: false, limitBytes });
  const push = req.push.bind(req) as Push;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: HeldBody | undefined) => {
      clearTimeout(timer);
      req.socket.off("close", onClose);
      req.push = push;
      resolve(outcome);
    };
    const whole = () => {
      const bytes = Buffer.concat(chunks, size);
      const release = () => {
        if (size > 0) push(bytes);
        push(null);
      };
      finish({ ok: true, bytes, release });
    };
    req.push = ((chunk: Buffer | null) => {
      if (chunk === null) whole();
      else if ((size += chunk.byteLength) > limitBytes) finish({ ok: false, limitBytes });
      else chunks.push(chunk);
      return true;
    }) as Push;
    const onClose = () => finish(undefined);
    const timer = setTimeout(() => finish({ ok: false, timedOutMs: deadlineMs }), deadlineMs);
    req.socket.once("close", onClose);
  });
}
