// A request's body held at the door (node:http) under a byte limit and the body deadline, before
// anything else is done with it: a declared length over the limit is refused unread, a streamed one
// the moment it passes, a slow one at the deadline; at most the limit is held, and a slow socket
// costs a few listeners and a timer. (Next.js alone read a 100 MB POST to `/` whole.)
//
// Held, not read: node:http pushes each chunk into the request; the door takes those pushes until
// the end, then (release) pushes the bytes and the end on, for Next.js to read as usual.
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
 * The body once whole within `limitBytes` and `deadlineMs`, or why not (the rest left unread), or
 * undefined when the client left. Call before any await: the first chunks come right after.
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
