// The body of a request the door hands to Next.js (a page, a session form, any route but the
// direct API), read here first under its lane's byte limit and the body deadline, and only then
// given to Next.js, as if it had just arrived. Next.js reads a page's body whole whatever its size
// (a 100 MB POST to `/` was read to its end), and a body still arriving would hold its lane's
// place. Here a declared Content-Length over the limit is refused before a byte is read, an
// undeclared one is counted as it streams and refused the moment it passes the limit, and a body
// not in by the deadline is refused: whatever the client sends, at most the limit is held.
//
// Held, not read: node:http pushes each chunk of the body into the request (a Readable) as it
// parses it; the door takes those pushes until the body ends, then pushes the same chunks, and the
// end, on to the request, which Next.js reads as before. Nothing of Node's own reading changes.
import type http from "node:http";

export type HeldBody =
  | { ok: true; release: () => void }
  | { ok: false; limitBytes: number }
  | { ok: false; timedOutMs: number };

/** True when the request carries a body (a declared length above 0, or a transfer coding). */
export function hasBody(req: http.IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const declared = req.headers["content-length"];
  return declared !== undefined && Number(declared) !== 0;
}

type Push = (chunk: unknown, encoding?: BufferEncoding) => boolean;

/**
 * Holds the request's body until it is whole within `limitBytes` and `deadlineMs`, then resolves
 * with `release` (which hands the body on to the request); or resolves with why not, the rest of
 * the body then left in the request (unread: the answer lingers, lingering-close.ts); or with
 * undefined when the client left first. Call as the request arrives, before any await: the chunks
 * that came with its headers are pushed right after the request's handler returns.
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
    const release = () => {
      for (const chunk of chunks) push(chunk);
      push(null);
    };
    req.push = ((chunk: Buffer | null) => {
      if (chunk === null) finish({ ok: true, release });
      else if ((size += chunk.byteLength) > limitBytes) finish({ ok: false, limitBytes });
      else chunks.push(chunk);
      return true;
    }) as Push;
    const onClose = () => finish(undefined);
    const timer = setTimeout(() => finish({ ok: false, timedOutMs: deadlineMs }), deadlineMs);
    req.socket.once("close", onClose);
  });
}
