// An attacker that holds `count` slow-body connections open for as long as it runs: each sends the
// headers of a checkout declaring a 4 KiB body, then one byte every 10 s. The server answers each
// one 408 at its body deadline and closes it; the attacker opens it again at once, so the count
// holds for the whole attack (what an attacker who wants to hold the door for a minute must do).
import { randomUUID } from "node:crypto";
import net from "node:net";

const BYTE_EVERY_MS = 10_000;

export interface SlowAttack {
  /** Resolves once every first connection has written its headers and first byte. */
  ready: Promise<void>;
  /** Sockets the server answered (or closed) and the attacker opened again. */
  reopened(): number;
  /** The answers' status lines, counted (e.g. "408"). */
  answers(): Record<string, number>;
  stop(): void;
}

/**
 * A checkout's request head declaring a 4 KiB body, and the body's first byte (`{`): all a slow
 * client ever sends at once. `host` is the Host header's value.
 */
export function slowCheckoutStart(host: string, token: string | undefined): string {
  return [
    "POST /api/trpc/checkout.placeOrder HTTP/1.1",
    `Host: ${host}`,
    "Content-Type: application/json",
    "Content-Length: 4096",
    `Idempotency-Key: ${randomUUID()}`,
    ...(token ? [`Authorization: Bearer ${token}`] : []),
    "",
    "{",
  ].join("\r\n");
}

export function startSlowAttack(port: number, count: number, token?: string): SlowAttack {
  let running = true;
  let reopened = 0;
  const answers: Record<string, number> = {};
  const live = new Set<net.Socket>();

  /** One slow connection; resolves when its headers and first byte are with the kernel. */
  const open = (): Promise<void> =>
    new Promise((written) => {
      const socket = net.connect(port, "127.0.0.1");
      live.add(socket);
      let trickle: NodeJS.Timeout | undefined;
      let answered = false;
      socket.on("error", () => {}); // a reset is the server closing it: "close" follows
      socket.on("connect", () => {
        socket.write(slowCheckoutStart(`127.0.0.1:${port}`, token), () => written());
        trickle = setInterval(() => socket.write(" "), BYTE_EVERY_MS);
      });
      socket.on("data", (chunk: Buffer) => {
        if (answered) return;
        answered = true;
        const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1"))?.[1] ?? "other";
        answers[status] = (answers[status] ?? 0) + 1;
        socket.destroy();
      });
      socket.on("close", () => {
        clearInterval(trickle);
        live.delete(socket);
        written(); // a socket closed before it wrote still counts as opened
        if (!running) return;
        reopened++;
        void open();
      });
    });

  const ready = Promise.all(Array.from({ length: count }, open)).then(() => undefined);
  return {
    ready,
    reopened: () => reopened,
    answers: () => ({ ...answers }),
    stop: () => {
      running = false;
      for (const socket of live) socket.destroy();
    },
  };
}
