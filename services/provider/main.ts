// The simulated payment provider as a process of its own: its own database (PROVIDER_DATABASE_URL,
// never the shop's), its own port, its HTTP API (server.ts) and its webhook deliveries
// (webhooks.ts). It imports nothing from the shop: the shop reaches it over HTTP, as it would a
// real provider.
//
//   PROVIDER_DATABASE_URL       its books (the schema is applied at start)
//   PROVIDER_SHOPS              the shops that may call it, as JSON (shops.ts): each one's id, secret
//                               key (the shop's PAYMENTS_PROVIDER_SECRET_KEY) and, optionally, the
//                               webhook its events go to with the secret they are signed with (the
//                               shop's PAYMENTS_WEBHOOK_SECRET); without a webhook they wait
//   PROVIDER_PORT               where it listens, on 127.0.0.1 (0: any free port)
//   DEMO_PROVIDER_FAILURE_RATE  share of charge requests refused with a 503 before charging
//   DEMO_PROVIDER_TIMEOUT_RATE  share that charge and then drop the connection without answering
//   DEMO_PROVIDER_DUPLICATE_RATE share of delivered events sent twice (default 0.2)
//
// Once listening it prints `[provider] listening on http://host:port`, the line its starters wait
// for.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";
import pg from "pg";
import { z } from "zod";
import { createProviderServer } from "./server";
import { parseShops } from "./shops";
import { createWebhookSender } from "./webhooks";

/**
 * Loopback only: its callers (the shop, the tests, the soak, the benches) run on the same machine,
 * and a simulated provider with published demo keys has no business facing a network.
 */
const HOST = "127.0.0.1";
const rate = z.coerce.number().min(0).max(1);
const env = z.object({
  PROVIDER_DATABASE_URL: z
    .string()
    .min(1, "PROVIDER_DATABASE_URL is not set: the provider's books need a database of their own"),
  PROVIDER_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  PROVIDER_SHOPS: z.string().optional(),
  DEMO_PROVIDER_FAILURE_RATE: rate.default(0),
  DEMO_PROVIDER_TIMEOUT_RATE: rate.default(0),
  // Real providers sometimes deliver a webhook twice; one in five here keeps the shop's webhook
  // idempotency exercised all the time.
  DEMO_PROVIDER_DUPLICATE_RATE: rate.default(0.2),
});
const parsed = env.safeParse(
  Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== "")),
);
function cannotStart(why: string): never {
  console.error(`[provider] cannot start: ${why}`);
  process.exit(1);
}
if (!parsed.success) cannotStart(z.prettifyError(parsed.error));
const config = parsed.data;
const shops = parseShops(config.PROVIDER_SHOPS);
if (!shops.ok) cannotStart(shops.message);

/**
 * Undelivered events are looked for every 5 s (a refused webhook's retry comes due), and at once
 * after each new charge: a charge's event goes out within milliseconds without a poll per second.
 */
const EVENT_POLL_MS = 5_000;

const pool = new pg.Pool({ connectionString: config.PROVIDER_DATABASE_URL, max: 8 });
pool.on("error", () => {}); // a dropped idle connection: the next query opens another
// A connection checked out of the pool has no listener of pg-pool's: the webhook sender holds one
// in a transaction while it posts, and PostgreSQL going away then (a restart, a failover) would
// emit `error` to nobody, which Node turns into a crash. The round's next statement fails on its
// own, the sender's loop retries, and the pool discards the connection when it is released.
pool.on("connect", (client) => client.on("error", () => {}));
await pool.query(readFileSync(path.join(import.meta.dirname, "schema.sql"), "utf8"));

// Aborted by a charge made while a round runs (or by shutdown): the next wait is skipped.
let nap = new AbortController();
const wake = () => nap.abort();
let stopping = false;
const server = createProviderServer(pool, {
  shops: shops.shops,
  failureRate: config.DEMO_PROVIDER_FAILURE_RATE,
  timeoutRate: config.DEMO_PROVIDER_TIMEOUT_RATE,
  onCharge: wake,
});

const sender = shops.shops.some((s) => s.webhook)
  ? createWebhookSender(pool, {
      shops: shops.shops,
      duplicateRate: config.DEMO_PROVIDER_DUPLICATE_RATE,
      log: (line) => console.warn(line),
    })
  : undefined;
const delivering = (async () => {
  if (!sender) return;
  while (!stopping) {
    nap = new AbortController();
    const more = await sender.runOnce().then(
      (round) => round.attempted > 0,
      (error: unknown) =>
        void console.warn(`[provider] webhook round failed: ${(error as Error).message}`),
    );
    if (!more) await sleep(EVENT_POLL_MS, undefined, { signal: nap.signal }).catch(() => {});
  }
})();

server.listen(config.PROVIDER_PORT, HOST, () => {
  const { port } = server.address() as { port: number };
  console.log(`[provider] listening on http://${HOST}:${port}`);
});

async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  wake();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await delivering;
  await pool.end();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
