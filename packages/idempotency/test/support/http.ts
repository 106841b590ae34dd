// A real HTTP server on a free loopback port for fetch-style handlers (tRPC's fetch adapter), so a
// client test goes through sockets, headers and status codes as a browser's request does.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { incomingMessageToRequest } from "@trpc/server/adapters/node-http";

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

export async function serveFetch(
  handle: (request: Request) => Promise<Response>,
): Promise<HttpServer> {
  const server = createServer((req, res) => {
    void (async () => {
      const response = await handle(incomingMessageToRequest(req, res, { maxBodySize: null }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections(); // the clients' keep-alive sockets would hold close() open
      }),
  };
}
