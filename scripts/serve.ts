// `npm run dev` / `npm start`: the app on its database, in one command.
// With no DATABASE_URL we start the embedded PostgreSQL (data kept between runs outside the
// project, see embeddedDataDir in tools/db/url.ts), migrate and seed it, run Next.js, and announce
// the database in .data/ for the tools. With DATABASE_URL we use that server as it is (`npm run
// db:setup` migrates and seeds it).
//
// Stopping: Ctrl-C, SIGTERM or Next.js exiting all run one shutdown, in order: the state files in
// .data/ go first (so no tool finds a database that is about to vanish), then Next.js, then
// PostgreSQL. The outage switch (`npm run db -- stop|start`, scripts/db.ts) stops PostgreSQL by
// its pid file and asks this process (SIGUSR2) to start it again on the same port.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  ownShutdownSignals,
  resolveDataDir,
  startEmbeddedPostgres,
  type EmbeddedServer,
} from "../tools/db/embedded";
import { findPostmaster, stopPostmaster } from "../tools/db/postmaster";
import { setupDatabase } from "../tools/db/setup";
import {
  ANNOUNCED_PROVIDER_FILE,
  ANNOUNCED_PROVIDER_KEY_FILE,
  ANNOUNCED_URL_FILE,
  APP_STATE_FILE,
  DATA_ROOT,
  embeddedDataDir,
  OLD_DATA_DIR,
  type AppState,
} from "../tools/db/url";
import { loadConfig } from "../src/server/config";
import { stopChild } from "../tools/process";
import { startProviderService, type ProviderService } from "../tools/provider-service";
import { supervisePaymentWorker } from "./lib/payment-worker";
import { decideListenAddress } from "./lib/listen-address";

const mode = process.argv[2];
if (mode !== "dev" && mode !== "start") {
  console.error("usage: tsx scripts/serve.ts dev|start");
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, "..");
mkdirSync(DATA_ROOT, { recursive: true });

// Demo mode (one-click demo accounts, demo tokens): on for `npm run dev` unless DEMO_MODE says
// otherwise; `npm start` opens it only with DEMO_MODE=1. Set before the configuration is first
// read, and passed on to Next.js, so the seed and the server agree.
if (mode === "dev") process.env.DEMO_MODE ??= "1";
ownShutdownSignals();
// The whole configuration, checked before anything starts: a missing or invalid variable stops
// here with one sentence, before PostgreSQL starts and before anything listens. (The database URL
// is checked by the server itself: without DATABASE_URL we start the embedded one below.)
let config;
try {
  config = loadConfig({ ...process.env, NODE_ENV: mode === "dev" ? "development" : "production" });
} catch (error) {
  console.error(`[once] cannot start: ${(error as Error).message}`);
  process.exit(1);
}
const demo = config.demo;
console.log(
  demo
    ? "[once] demo mode: demo accounts sign in with one click, demo tokens work"
    : "[once] demo mode off: sign in with an account made by `npm run users`",
);
const listen = decideListenAddress({
  mode,
  host: config.http.host,
  demo,
  allowRemoteDemo: config.http.demoAllowRemote,
});
if (!listen.ok) {
  console.error(listen.refusal);
  process.exit(2);
}
console.log(listen.announcement);

function removeStateFiles(): void {
  rmSync(ANNOUNCED_URL_FILE, { force: true });
  rmSync(ANNOUNCED_PROVIDER_FILE, { force: true });
  rmSync(ANNOUNCED_PROVIDER_KEY_FILE, { force: true });
  rmSync(APP_STATE_FILE, { force: true });
}
// Whatever ends this process, the files that say "the app is running" go with it.
process.on("exit", removeStateFiles);

let stopping = false;
let server: EmbeddedServer | undefined;
let dataDir = "";
let pgPort = 0;

/** Starts (or restarts) the embedded PostgreSQL on the same folder and port. */
async function startDatabase(): Promise<EmbeddedServer> {
  const started = await startEmbeddedPostgres({
    dataDir,
    port: pgPort || undefined,
    persistent: true,
  });
  pgPort = started.port;
  started.onExit(() => {
    if (server === started) server = undefined;
    if (!stopping)
      console.log(
        `[db] PostgreSQL stopped: the app answers 503 until \`npm run db -- start\` brings it back`,
      );
  });
  server = started;
  return started;
}

if (!process.env.DATABASE_URL) {
  const begun = Date.now();
  dataDir = resolveDataDir(embeddedDataDir());
  if (existsSync(OLD_DATA_DIR))
    console.log(
      `[db] ${OLD_DATA_DIR} holds an older embedded database that is no longer used: remove it with rm -rf .data/pg`,
    );
  pgPort = process.env.PGPORT ? Number(process.env.PGPORT) : 0;
  const db = await startDatabase();
  await db.createDatabase("once");
  process.env.DATABASE_URL = db.url("once");
  await setupDatabase(process.env.DATABASE_URL, console.log, { demo });
  // So `npm run worker`, `reconcile`, `jobs`, `seed:keys` and `db` find this server while it runs.
  writeFileSync(ANNOUNCED_URL_FILE, process.env.DATABASE_URL, { mode: 0o600 });
  const state: AppState = { pid: process.pid, pgPort, dataDir };
  writeFileSync(APP_STATE_FILE, JSON.stringify(state), { mode: 0o600 });
  console.log(
    `[db] embedded PostgreSQL on port ${pgPort} (${dataDir}), ready in ${Date.now() - begun} ms`,
  );
} else {
  console.log("[db] using DATABASE_URL (run `npm run db:setup` to migrate and seed it)");
}

// The payment provider, a service of its own (services/provider): its own process, port and
// database ("provider" beside the shop's in the embedded server, or PROVIDER_DATABASE_URL). With
// PAYMENTS_PROVIDER_URL set the shop uses that provider and we start none. It serves the shop under
// the shop's secret key (PAYMENTS_PROVIDER_SECRET_KEY; the demo key in demo mode), and posts its
// events to this app's webhook, signed with the shop's secret.
let provider: ProviderService | undefined;
if (!process.env.PAYMENTS_PROVIDER_URL) {
  const databaseUrl =
    process.env.PROVIDER_DATABASE_URL ??
    (server ? (await server.createDatabase("provider"), server.url("provider")) : undefined);
  if (!databaseUrl) {
    console.error(
      "[once] cannot start: with DATABASE_URL set, set PAYMENTS_PROVIDER_URL (a payment provider that runs) or PROVIDER_DATABASE_URL (a database for the simulated one)",
    );
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 3000);
  try {
    provider = await startProviderService({
      databaseUrl,
      secretKey: config.payments.providerSecretKey,
      port: process.env.PROVIDER_PORT ? Number(process.env.PROVIDER_PORT) : 0,
      webhook: {
        url: `http://127.0.0.1:${port}/api/webhooks/payments`,
        secret: config.payments.webhookSecret,
      },
      failureRate: Number(process.env.DEMO_PROVIDER_FAILURE_RATE ?? 0),
      timeoutRate: Number(process.env.DEMO_PROVIDER_TIMEOUT_RATE ?? 0),
      // Started again on the same port if it dies, until the shutdown below stops it.
      restart: true,
    });
  } catch (error) {
    console.error(`[once] cannot start: ${(error as Error).message}`);
    await server?.stop();
    process.exit(1);
  }
  process.env.PAYMENTS_PROVIDER_URL = provider.url;
  writeFileSync(ANNOUNCED_PROVIDER_FILE, provider.url, { mode: 0o600 });
  // `npm run reconcile` calls it with the key it was started with (readable by this user only).
  writeFileSync(ANNOUNCED_PROVIDER_KEY_FILE, config.payments.providerSecretKey, { mode: 0o600 });
  console.log(
    `[provider] the simulated payment provider on ${provider.url} (pid ${provider.child.pid})`,
  );
}

// In production the payment loops get a process of their own (scripts/lib/payment-worker.ts),
// unless ONCE_PAYMENT_JOBS says where they run; `npm run dev` keeps everything in one process.
const separateWorker =
  mode === "start" &&
  process.env.ONCE_PAYMENT_JOBS === undefined &&
  process.env.ONCE_BACKGROUND_JOBS !== "0";
if (separateWorker) process.env.ONCE_PAYMENT_JOBS = "0";
// A worker that keeps dying at once will not be fixed by restarts: stop the whole app, so whatever
// supervises it (systemd, a container) sees the failure instead of a server taking unpaid orders.
const worker = separateWorker
  ? supervisePaymentWorker(root, { onGiveUp: () => void shutdown(1) })
  : undefined;

// Next.js behind the front door (scripts/front-door.ts): a Node server of our own that owns the
// socket (timeouts, the peer's address, refusals written before Next.js works), Next.js's
// documented custom server.
const next = spawn(
  process.execPath,
  ["--import", "tsx", path.join(root, "scripts/front-door.ts"), mode, "-H", listen.host],
  {
    stdio: "inherit",
    // NEXT_MANUAL_SIG_HANDLE: SIGTERM is left to the app, which stops its jobs and flushes its
    // counters before it exits (src/server/start.ts).
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      NEXT_MANUAL_SIG_HANDLE: "1",
    },
  },
);

let restarting: Promise<unknown> = Promise.resolve();
process.on("SIGUSR2", () => {
  restarting = restarting.then(async () => {
    if (stopping || !dataDir || server || findPostmaster(dataDir)) return;
    await startDatabase().then(
      () => console.log(`[db] PostgreSQL is back on port ${pgPort}: the app reconnects by itself`),
      (error: unknown) =>
        console.error(`[db] PostgreSQL did not start again: ${(error as Error).message}`),
    );
  });
});

async function shutdown(code: number): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  // Ctrl-C reached the provider as well: its exit is ours, not news.
  provider?.expectExit();
  removeStateFiles();
  await Promise.all([stopChild(next), worker?.stop()]);
  await provider?.stop();
  await restarting;
  if (server) await server.stop();
  // A PostgreSQL this process no longer holds a handle to (stopped and started again by hand
  // with pg_ctl, say) still holds our folder: stop it by its pid file.
  const left = dataDir ? findPostmaster(dataDir) : null;
  if (left) await stopPostmaster(left);
  if (dataDir) console.log("[db] embedded PostgreSQL stopped");
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => void shutdown(0));
next.on("exit", (code, signal) => void shutdown(code ?? (signal ? 0 : 1)));
