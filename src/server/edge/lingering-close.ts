// A refused body's connection closed as nginx's lingering close does: the answer written, the rest
// of the body read and dropped, then closed. Closed at once, the kernel resets the client's still
// incoming bytes, and a client that writes its whole body before reading (undici) sees `fetch
// failed` instead of the answer. Bounded in time and bytes.
import type http from "node:http";
import type net from "node:net";

/** How long the rest of a refused body is read and dropped before the connection closes anyway. */
export const LINGER_MS = 5_000;

/** The most of a refused body dropped: enough to let a mistaken upload read its 413. */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024;

/** Node's own close after an answer with `Connection: close` (net.Socket, not in its types). */
type ClosingSocket = net.Socket & { destroySoon?: () => void };

/** Closes the connection after this answer and the rest of the body (bounded). Call before writing. */
export function closeAfterLingering(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.shouldKeepAlive = false;
  const socket = req.socket as ClosingSocket;
  const close = socket.destroySoon;
  if (typeof close !== "function") return;
  // Node calls destroySoon once the answer is written (its server's resOnFinish).
  socket.destroySoon = () => {
    socket.destroySoon = close;
    void drained(req, socket).then(() => close.call(socket));
  };
}

/** Resolves once the request's body is in (read and dropped), past the bounds, or the socket gone. */
function drained(req: http.IncomingMessage, socket: net.Socket): Promise<void> {
  if (req.complete || socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = () => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", finish);
      socket.off("close", finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > LINGER_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, LINGER_MS);
    // Whoever read the body before (the door's own reader) stopped at its limit and paused it.
    req.removeAllListeners("data");
    req.on("data", onData);
    req.once("end", finish);
    socket.once("close", finish);
    req.resume();
  });
}
