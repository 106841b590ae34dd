// A refused body's connection closed the way nginx's lingering close does: the answer (413, 408, a
// 503 before the body) is written, then what the client is still sending is read and dropped, and
// only then is the connection closed. Closed at once, the socket still has the client's bytes
// coming in, and the kernel answers them with a reset: a client still sending (Node's fetch,
// undici, which writes the whole body before it reads) then sees `fetch failed` instead of the
// answer already sitting in its socket. The reading is bounded, in time and in bytes, so a client
// that sends forever holds its socket for LINGER_MS at most, and then is reset after all.
import type http from "node:http";
import type net from "node:net";

/** How long the rest of a refused body is read and dropped before the connection closes anyway. */
export const LINGER_MS = 5_000;

/**
 * How much of a refused body is read and dropped at most: enough for a client that sent a large
 * file by mistake to read why it was refused (the 413), not a sink for any amount of traffic.
 */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024;

/** Node's own close after an answer with `Connection: close` (net.Socket, not in its types). */
type ClosingSocket = net.Socket & { destroySoon?: () => void };

/**
 * The connection closes after this answer, but not before the rest of the request's body has been
 * read and dropped (or LINGER_MS / LINGER_MAX_BYTES have passed). Call before writing the answer.
 */
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
