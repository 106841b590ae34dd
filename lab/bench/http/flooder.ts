// An anonymous flood as a process of its own (forked by floods.ts with an IPC channel), so that its
// connections do not share an event loop with the client that measures the server. Arguments:
// port, the flood (a path flooded by autocannon, or `idle`) and a connection count. A path's flood
// sends as fast as it is answered on `count` keep-alive connections; `idle` opens `count`
// connections, each sends one `GET /api/health` and then sits idle, and each one the server closes
// is opened again. It says `{ ready: true }` once the flood runs; told "stop", it stops, says the
// answers it got (by status), how many connections it opened again and the CPU it spent, and exits.
import net from "node:net";
import autocannon from "autocannon";

const [port, flood, count] = process.argv.slice(2) as [string, string, string];
const answers: Record<string, number> = {};
const tally = (status: string) => (answers[status] = (answers[status] ?? 0) + 1);

/** `count` connections flooding `path` (the webhook with a small unsigned event). */
function floodPath(path: string): () => void {
  const webhook = path.startsWith("/api/webhooks/");
  const run = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: Number(count),
    duration: 3_600,
    timeout: 10,
    requests: [
      webhook
        ? {
            method: "POST",
            path,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ id: "evt_flood", type: "charge.succeeded" }),
          }
        : { method: "GET", path },
    ],
  });
  run.on("response", (_client: unknown, status: number) => tally(String(status)));
  return () => run.stop();
}

let reopened = 0;
let stopping = false;

/** One idle keep-alive connection, opened again whenever the server closes it. */
function idleConnection(): void {
  const socket = net.connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  socket.once("data", (chunk) => tally(String(chunk).split(" ")[1] ?? "?"));
  socket.once("close", () => {
    if (stopping) return;
    reopened++;
    idleConnection();
  });
  socket.write("GET /api/health HTTP/1.1\r\nHost: flood\r\n\r\n");
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
}
const sockets = new Set<net.Socket>();

const stop =
  flood === "idle"
    ? (() => {
        for (let i = 0; i < Number(count); i++) idleConnection();
        return () => sockets.forEach((socket) => socket.destroy());
      })()
    : floodPath(flood);
process.send!({ ready: true });
process.on("message", (message) => {
  if (message !== "stop") return;
  stopping = true;
  stop();
  const { user, system } = process.cpuUsage();
  process.send!({ answers, reopened, cpuMs: (user + system) / 1000 }, () => process.exit(0));
});
