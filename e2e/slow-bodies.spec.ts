// Slow bodies count for nothing, on the production build with real sockets: an attacker opens 40 or
// 400 connections that send the headers of a checkout declaring a 4 KiB body, then its first byte
// and nothing more (anonymous, or with a valid token). While every one of them is still open and
// unanswered, another client's catalog reads and checkouts are all served, and health says `up`;
// then every slow socket is answered 408 request_timeout at the body deadline, having executed
// nothing. (The request takes its admission place only once its body is in.)
import { randomBytes, randomUUID } from "node:crypto";
import net from "node:net";
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { expect, test } from "@playwright/test";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { setupDatabase } from "../tools/db/setup";
import { startNextInstance, type NextInstance } from "../tools/next/instance";

test.describe.configure({ mode: "serial" });

let dataDir: string;
let database: EmbeddedServer;
let instance: NextInstance;
let productId: string;
const TOKEN = "acme_demo_token";

test.beforeAll(async () => {
  test.setTimeout(180_000);
  dataDir = await makeTempDataDir("once-e2e-slow-");
  database = await startEmbeddedPostgres({ dataDir, persistent: false });
  await database.createDatabase("once");
  const databaseUrl = database.url("once");
  await setupDatabase(databaseUrl, () => {}, { demo: true });
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await sql.query(`UPDATE "Product" SET "stock" = 1000000`);
  productId = (
    await sql.query<{ id: string }>(`SELECT "id" FROM "Product" WHERE "sku" = 'MUG-001'`)
  ).rows[0]!.id;
  await sql.end();
  instance = await startNextInstance({
    DATABASE_URL: databaseUrl,
    DEMO_MODE: "1",
    PAYMENTS_WEBHOOK_SECRET: randomBytes(24).toString("hex"),
    ONCE_BACKGROUND_JOBS: "0",
    NEXT_MANUAL_SIG_HANDLE: "1",
  });
});

test.afterAll(async () => {
  await instance?.stop();
  await database?.stop();
  if (dataDir) rmSync(path.dirname(dataDir), { recursive: true, force: true });
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
      const head = [
        "POST /api/trpc/checkout.placeOrder HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Content-Length: 4096",
        `Idempotency-Key: ${randomUUID()}`,
        ...(token ? [`Authorization: Bearer ${token}`] : []),
        "",
        "",
      ].join("\r\n");
      // The write's callback: the headers and the first byte are with the kernel.
      socket.write(`${head}{`, (error) =>
        error ? reject(error) : resolve({ answer: () => received, answered, socket }),
      );
    });
  });
}

function catalogRead(): Promise<Response> {
  return fetch(`${instance.baseURL}/api/trpc/catalog.list`);
}

function checkout(): Promise<Response> {
  return fetch(`${instance.baseURL}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      "idempotency-key": randomUUID(),
    },
    body: JSON.stringify({ items: [{ productId, quantity: 1 }] }),
  });
}

for (const count of [40, 400])
  for (const token of [undefined, TOKEN])
    test(`${count} slow-body connections (${token ? "with a valid token" : "anonymous"}) shut nobody out`, async () => {
      test.setTimeout(90_000);
      const port = Number(new URL(instance.baseURL).port);
      const slow = await Promise.all(
        Array.from({ length: count }, () => openSlowSocket(port, token)),
      );
      try {
        // The barrier: a request sent after every slow socket's headers and first byte were
        // written is answered, so the server has accepted and parsed the slow ones (it accepts
        // and reads in order); and their bodies are still being waited for (no answer yet).
        expect((await catalogRead()).status).toBe(200);
        expect(slow.filter((s) => s.answer() !== "")).toEqual([]);

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
