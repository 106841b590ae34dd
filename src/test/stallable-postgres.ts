// PostgreSQL behind a forwarder that can stop answering new connections: a starved server, whose
// new connections are accepted but whose login never comes back, while the connections already
// made go on working. For the tests that tell a slow database (busy) from a lost one.
import net from "node:net";

export interface StallablePostgres {
  /** The database's URL through the forwarder. */
  url: string;
  /** From now on, new connections hang (those already made are served). */
  stall(): void;
  /** New connections go through again. */
  resume(): void;
  close(): Promise<void>;
}

export async function stallablePostgres(databaseUrl: string): Promise<StallablePostgres> {
  const target = new URL(databaseUrl);
  let stalled = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    if (stalled) return;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    stall: () => (stalled = true),
    resume: () => (stalled = false),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
