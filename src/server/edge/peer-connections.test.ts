// The cap on connections per peer address, attacked on a real socket: past it a new connection from
// that address is closed on accept and counted; other addresses are served; a connection that
// closes gives its place back.
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { capConnectionsPerPeer } from "./peer-connections";

let server: http.Server | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function cappedServer(max: number) {
  let refused = 0;
  server = http.createServer((_req, res) => res.end("served"));
  capConnectionsPerPeer(server, { max: () => max, onRefuse: () => refused++ });
  // The server's side of each connection, in the order accepted: its close is when the place is
  // given back (the client's own close comes first).
  const accepted: Promise<void>[] = [];
  server.on("connection", (socket: net.Socket) =>
    accepted.push(new Promise((resolve) => socket.once("close", () => resolve()))),
  );
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, refused: () => refused, serverClosed: (i: number) => accepted[i]! };
}

/** A connection from `from` that sends one GET and resolves with what came back before it closed. */
function connection(port: number, from: string) {
  const socket = net.connect({ port, host: "127.0.0.1", localAddress: from });
  sockets.push(socket);
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
  socket.on("error", () => {});
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(received)));
  const connected = new Promise<void>((resolve) => socket.on("connect", resolve));
  const ask = () => socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const answered = new Promise<string>((resolve) =>
    socket.on("data", () => received.includes("served") && resolve(received)),
  );
  return { socket, connected, closed, ask, answered };
}

describe("the cap on connections per peer address", () => {
  it("closes a connection past the cap on accept, counts it, and serves other addresses", async () => {
    const { port, refused, serverClosed } = await cappedServer(2);
    const held = [connection(port, "127.0.0.1"), connection(port, "127.0.0.1")];
    for (const c of held) {
      await c.connected;
      c.ask();
      await c.answered; // accepted and counted before the next is opened
    }
    const past = connection(port, "127.0.0.1");
    expect(await past.closed).toBe(""); // closed without a byte
    expect(refused()).toBe(1);

    const other = connection(port, "127.0.0.2");
    await other.connected;
    other.ask();
    expect(await other.answered).toContain("served");

    // One held connection closes: its place is given back.
    held[0]!.socket.destroy();
    await serverClosed(0);
    const again = connection(port, "127.0.0.1");
    await again.connected;
    again.ask();
    expect(await again.answered).toContain("served");
    expect(refused()).toBe(1);
  });

  it("caps nothing at 0", async () => {
    const { port, refused } = await cappedServer(0);
    const all = Array.from({ length: 20 }, () => connection(port, "127.0.0.1"));
    for (const c of all) {
      await c.connected;
      c.ask();
    }
    for (const c of all) expect(await c.answered).toContain("served");
    expect(refused()).toBe(0);
  });
});
