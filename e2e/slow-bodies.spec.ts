// Slow bodies count for nothing, on the production build with real sockets: an attacker opens 40,
// 400 or 4 000 connections that send the headers of a checkout declaring a 4 KiB body, then its
// first byte and nothing more (anonymous, or with a valid token). While every one of them is still
// open and unanswered, another client's catalog reads and checkouts are all served, and health says
// `up`; then every slow socket is answered 408 request_timeout at the body deadline (10 s), having
// executed nothing. (The request takes its admission place only once its body is in.) No socket
// can be held longer than that deadline: an attacker who wants to hold them for a minute has to
// open them again.
//
// 4 000 sockets need 4 000 file descriptors in this process and as many in the server: Node raises
// its soft limit to the hard limit when it starts, so the hard limit (`ulimit -Hn`; systemd's
// LimitNOFILE, Docker's --ulimit nofile) must allow them. The test reads both processes' limits
// first and says so if they do not.
//
// With a cap on connections per peer address (HTTP_MAX_CONNECTIONS_PER_PEER), the same attacker
// from one address holds no more than the cap; the rest are closed on accept and counted, and a
// client from another address is served.
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { expect, test } from "@playwright/test";
import { slowCheckoutStart } from "../lab/bench/http/slow-attack";
import type { NextInstance } from "../tools/next/instance";
import {
  ADMIN_TOKEN,
  catalogRead as catalogAnswer,
  checkout as checkoutAnswer,
  TOKEN,
  useAttackTarget,
} from "./attack-target";

test.describe.configure({ mode: "serial" });

const target = useAttackTarget();
let instance: NextInstance;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  instance = await target.instance();
});

interface SlowSocket {
  /** Everything the server has sent back so far. */
  answer(): string;
  /** Resolves with the server's answer once it has sent one (or closed the socket). */
  answered: Promise<string>;
  socket: net.Socket;
}

/** An HTTP answer in full: its headers, and its body by Content-Length or chunked to the end. */
function wholeAnswer(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  if (length) return Buffer.byteLength(text.slice(end + 4)) >= Number(length[1]);
  return text.endsWith("\r\n0\r\n\r\n");
}

/** One connection that sends a checkout's headers, one byte of its 4 KiB body, then nothing. */
function openSlowSocket(port: number, token: string | undefined): Promise<SlowSocket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const answered = new Promise<string>((done) => {
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString();
        if (wholeAnswer(received)) done(received);
      });
      socket.on("close", () => done(received));
    });
    socket.on("error", reject);
    socket.on("connect", () => {
      // The write's callback: the headers and the first byte are with the kernel.
      socket.write(slowCheckoutStart("127.0.0.1", token), (error) =>
        error ? reject(error) : resolve({ answer: () => received, answered, socket }),
      );
    });
  });
}

const catalogRead = () => catalogAnswer(instance.baseURL);
const checkout = () => checkoutAnswer(instance.baseURL, target.productId);

/** The soft limit on open files of a process (`self` or a pid), from /proc. */
function openFilesLimit(pid: number | "self"): number {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft);
}

/** Fails, saying what to raise, when a process could not hold `sockets` more open files. */
function expectRoomFor(sockets: number): void {
  const needed = sockets + 1024; // the sockets, and what the process holds besides
  for (const [who, pid] of [
    ["this test process", "self"],
    ["the server", instance.process.pid!],
  ] as const)
    expect(
      openFilesLimit(pid),
      `${who} may open too few files for ${sockets} sockets: raise the hard limit (ulimit -Hn ${needed}, systemd LimitNOFILE=${needed}); Node raises its soft limit to it`,
    ).toBeGreaterThanOrEqual(needed);
}

for (const count of [40, 400, 4000])
  for (const token of [undefined, TOKEN])
    test(`${count} slow-body connections (${token ? "with a valid token" : "anonymous"}) shut nobody out`, async () => {
      test.setTimeout(180_000);
      expectRoomFor(count);
      const port = Number(new URL(instance.baseURL).port);
      const slow = await Promise.all(
        Array.from({ length: count }, () => openSlowSocket(port, token)),
      );
      try {
        // The barrier: a request sent after every slow socket's headers and first byte were
        // written is answered, so the server has accepted and parsed the slow ones (it accepts
        // and reads in order); and their bodies are still being waited for (no answer yet).
        expect((await catalogRead()).status).toBe(200);
        expect(slow.filter((s) => s.answer() !== "").length).toBe(0);

        // Another client's reads and checkouts, at once: every one served.
        const answers = await Promise.all([
          ...Array.from({ length: 30 }, catalogRead),
          ...Array.from({ length: 10 }, checkout),
        ]);
        expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
        const health = await fetch(`${instance.baseURL}/api/health`);
        expect(health.status).toBe(200);
        // The attack was in force all along: not one slow socket has been answered yet.
        expect(slow.filter((s) => s.answer() !== "").length).toBe(0);

        // Then each is told its body did not come in time, and nothing ran for it.
        const told = await Promise.all(slow.map((s) => s.answered));
        for (const answer of told) {
          expect(answer).toMatch(/^HTTP\/1\.1 408 /);
          expect(answer).toContain("request_timeout");
        }
      } finally {
        for (const s of slow) s.socket.destroy();
      }
    });

/** A GET from another loopback address (`from`), as a client elsewhere would send it. */
function getFrom(
  from: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress: from, headers, agent: false }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

test("a cap on connections per peer address: one address holds no more than the cap, the rest are closed and counted, other addresses are served", async () => {
  test.setTimeout(120_000);
  const CAP = 100;
  const ATTACK = 400;
  const capped = await target.instance({ HTTP_MAX_CONNECTIONS_PER_PEER: String(CAP) });
  try {
    const url = new URL(capped.baseURL);
    const elsewhere = "127.0.0.2";
    // The app (and with it the cap) is made at start-up; a read from elsewhere proves it is up.
    expect((await getFrom(elsewhere, `${url.origin}/api/trpc/catalog.list`)).status).toBe(200);
    const sockets = Array.from({ length: ATTACK }, () => {
      const socket = net.connect(Number(url.port), "127.0.0.1");
      socket.on("error", () => {}); // a socket closed on accept may see a reset
      let received = "";
      let closed = false;
      socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
      socket.on("close", () => (closed = true));
      socket.on("connect", () => socket.write(slowCheckoutStart("127.0.0.1", undefined)));
      return { socket, received: () => received, closed: () => closed };
    });
    try {
      // Every connection past the cap is closed, without a byte of answer.
      await expect.poll(() => sockets.filter((s) => s.closed()).length).toBe(ATTACK - CAP);
      expect(sockets.filter((s) => s.closed() && s.received() !== "")).toEqual([]);
      // The cap's worth still open and unanswered; a client elsewhere is served meanwhile.
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => getFrom(elsewhere, `${url.origin}/api/trpc/catalog.list`)),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(sockets.filter((s) => !s.closed() && s.received() === "").length).toBe(CAP);
      const metrics = await getFrom(elsewhere, `${url.origin}/api/metrics`, {
        authorization: `Bearer ${ADMIN_TOKEN}`,
      });
      expect(metrics.body).toContain(
        `once_http_refusals_total{reason="too_many_connections",stage="connection"} ${ATTACK - CAP}`,
      );
    } finally {
      for (const s of sockets) s.socket.destroy();
    }
  } finally {
    await capped.stop();
  }
});
