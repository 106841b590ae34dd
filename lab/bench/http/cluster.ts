// What the HTTP bench runs against: a throwaway embedded PostgreSQL (migrated, seeded, plus a bench
// product whose stock cannot run out) and `next start` instances of the production build on it,
// each a child process we stop by its pid.
import { setTimeout as sleep } from "node:timers/promises";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startThrowawayPostgres, type EmbeddedServer } from "../../../tools/db/embedded";
import { setupDatabase } from "../../../tools/db/setup";
import { stopChild } from "../../../tools/process";
import { spawnPaymentWorker } from "../../../scripts/lib/payment-worker";
import { startProviderService } from "../../../tools/provider-service";
import { onCores } from "./cores";

export const ROOT = path.resolve(import.meta.dirname, "../../..");
/** The module of the control procedure, which the front door serves beside the app's. */
const CONTROL_ROUTE_MODULE = path.join(ROOT, "lab/bench/http/control-route.ts");

/** Two billion units: at a few thousand orders a second no bench comes near the end of it. */
const BENCH_STOCK = 2_000_000_000;
const BENCH_SKU = "BENCH-HTTP";

export interface Database {
  url: string;
  pool: pg.Pool;
  productId: string;
  /** The postmaster: its CPU time and its backends' is what PostgreSQL spends on the bench. */
  pid: number;
  /**
   * The payment provider service (its own process and database): PAYMENTS_PROVIDER_URL, and its
   * pid.
   */
  providerUrl: string;
  providerPid: number;
  /** The provider's books (its own server): the bench waits there for events to be delivered. */
  providerPool: pg.Pool;
  stop: () => Promise<void>;
}

/** The secret the provider signs its events with, and the bench's servers check them by. */
export const BENCH_WEBHOOK_SECRET = "bench-webhook-secret-0123456789abcdef";
/** The shop's secret key with the provider: the provider serves the bench's shop under it. */
export const BENCH_PROVIDER_SECRET_KEY = "sk_bench_once_provider_key_0123456789abcdef";

/**
 * `webhookPort`: the instance the provider posts its events to (the first one), as a provider posts
 * to its merchant in production; without it the events wait in the provider's books.
 */
export async function startDatabase(options: { webhookPort?: number } = {}): Promise<Database> {
  // pg_stat_statements counts the statements (so the round trips) a paid order costs
  // (order-cost.ts).
  const server: EmbeddedServer = await startThrowawayPostgres("once-bench-http-", {
    shared_preload_libraries: "pg_stat_statements",
  });
  await server.createDatabase("bench");
  const url = server.url("bench");
  // The demo tokens: the bench calls as acme (acme_demo_token), and its servers run in demo mode.
  await setupDatabase(url, () => {}, { demo: true });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on("error", () => {}); // the server stops at the end: its goodbye notices are expected
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO "Product" ("sku", "name", "description", "priceCents", "currency", "stock")
     VALUES ($1, 'Bench widget', 'Stock that never runs out', 100, 'EUR', $2)
     ON CONFLICT ("sku") DO UPDATE SET "stock" = EXCLUDED."stock" RETURNING "id"::text`,
    [BENCH_SKU, BENCH_STOCK],
  );
  // The provider is someone else's service: its own PostgreSQL server too, so the CPU read from
  // this one's processes is the shop's alone.
  const providerDb: EmbeddedServer = await startThrowawayPostgres("once-bench-provider-");
  await providerDb.createDatabase("provider");
  const provider = await startProviderService({
    databaseUrl: providerDb.url("provider"),
    secretKey: BENCH_PROVIDER_SECRET_KEY,
    log: () => {},
    ...(options.webhookPort
      ? {
          webhook: {
            url: `http://127.0.0.1:${options.webhookPort}/api/webhooks/payments`,
            secret: BENCH_WEBHOOK_SECRET,
          },
        }
      : {}),
  });
  const providerPool = new pg.Pool({ connectionString: providerDb.url("provider"), max: 1 });
  providerPool.on("error", () => {});
  return {
    url,
    pool,
    productId: rows[0]!.id,
    pid: Number(readFileSync(path.join(server.dataDir, "postmaster.pid"), "utf8").split("\n")[0]),
    providerUrl: provider.url,
    providerPid: provider.child.pid!,
    providerPool,
    stop: async () => {
      await provider.stop();
      await providerPool.end();
      await pool.end();
      await providerDb.stop();
      await server.stop();
    },
  };
}

export interface Instance {
  port: number;
  pid: number;
  logFile: string;
  stop: () => Promise<void>;
}

export interface InstanceOptions {
  port: number;
  databaseUrl: string;
  providerUrl: string;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=…"]. */
  nodeFlags?: string[];
  /** false: the server runs no payment loops (ONCE_PAYMENT_JOBS=0); a worker process does. */
  paymentJobs?: boolean;
  /** Another checkout's production build (the --baseline); this one's by default. */
  root?: string;
  /** Variables on top of the bench's (e.g. HTTP_MAX_IN_FLIGHT for an unbounded instance). */
  env?: Record<string, string>;
  /** The cores it runs on, in taskset's syntax (cores.ts); every core by default. */
  cores?: string;
}

/**
 * `npm start`'s server on loopback, serving the bench's control procedure beside the app's
 * (lab/bench/http/control-route.ts), with the background jobs running.
 */
export async function startInstance(options: InstanceOptions): Promise<Instance> {
  const logFile = path.join(os.tmpdir(), `once-bench-http-${options.port}.log`);
  const log = createWriteStream(logFile);
  const root = options.root ?? ROOT;
  const listen = ["start", "-p", String(options.port), "-H", "127.0.0.1"];
  // This tree's server as `npm start` runs it, behind its front door (scripts/front-door.ts);
  // another build (the --baseline) as its own `next start`.
  const server =
    root === ROOT
      ? ["--import", "tsx", path.join(ROOT, "scripts/front-door.ts"), ...listen]
      : [path.join(root, "node_modules/next/dist/bin/next"), ...listen];
  const [command, args] = onCores(options.cores, process.execPath, [
    ...(options.nodeFlags ?? []),
    ...server,
  ]);
  const child = spawn(command, args, {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...benchEnv(options.databaseUrl, options.providerUrl),
      ONCE_PAYMENT_JOBS: options.paymentJobs === false ? "0" : "1",
      ...options.env,
    },
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  await waitReady(child, options.port, logFile);
  return {
    port: options.port,
    pid: child.pid!,
    logFile,
    stop: failIfItDies(child, `next start on ${options.port}`, logFile),
  };
}

/**
 * A child that exits before the bench stops it fails the bench (lab/bench/fail.ts prints the error
 * and exits 1), instead of the bench measuring connection errors. Returns the stop function.
 */
export function failIfItDies(
  child: ChildProcess,
  name: string,
  logFile: string,
): () => Promise<void> {
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping)
      throw new Error(
        `${name} exited during the bench (code ${code}, signal ${signal}); see ${logFile}`,
      );
  });
  return () => {
    stopping = true;
    return stopChild(child);
  };
}

/** `npm run worker` (outbox, reconciliation) as a process of its own. */
export function startWorkerProcess(
  databaseUrl: string,
  providerUrl: string,
): { pid: number; stop: () => Promise<void> } {
  const logFile = path.join(os.tmpdir(), `once-bench-http-worker-${process.pid}.log`);
  const log = createWriteStream(logFile);
  const child = spawnPaymentWorker(ROOT, {
    stdio: ["ignore", "pipe", "pipe"],
    env: benchEnv(databaseUrl, providerUrl),
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return { pid: child.pid!, stop: failIfItDies(child, "the payment worker", logFile) };
}

/**
 * The hand-written checkout (floor-server.ts) on `port`, a process of its own: its CPU is read by
 * its pid.
 */
export async function startFloorServer(
  databaseUrl: string,
  port: number,
  cores?: string,
): Promise<{ port: number; pid: number; stop: () => Promise<void> }> {
  const logFile = path.join(os.tmpdir(), `once-bench-http-floor-${port}.log`);
  const log = createWriteStream(logFile);
  const [command, args] = onCores(cores, process.execPath, [
    "--import",
    "tsx",
    path.join(ROOT, "lab/bench/http/floor-server.ts"),
  ]);
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      PORT: String(port),
    },
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  await waitReady(child, port, logFile);
  return {
    port,
    pid: child.pid!,
    stop: failIfItDies(child, `the floor server on ${port}`, logFile),
  };
}

function benchEnv(databaseUrl: string, providerUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    PAYMENTS_PROVIDER_URL: providerUrl,
    PAYMENTS_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
    PAYMENTS_PROVIDER_SECRET_KEY: BENCH_PROVIDER_SECRET_KEY,
    // The control procedure (benchControl.placeOrder) is the lab's: the front door serves it only
    // with both of these (scripts/lib/lab-routes.ts). A --baseline build's `next start` ignores it.
    DEMO_MODE: "1",
    ONCE_LAB_ROUTES: CONTROL_ROUTE_MODULE,
    // The per-tenant cap (100 000 live keys) would stop a long run with 429s: every request of
    // the bench is the same tenant's. The cap's check still runs, as in production.
    IDEMPOTENCY_MAX_LIVE_KEYS: "100000000",
    NEXT_TELEMETRY_DISABLED: "1",
  };
}

async function waitReady(child: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`next start on ${port} exited (${child.exitCode}); see ${logFile}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
  await stopChild(child);
  throw new Error(`next start on ${port} not ready in 30 s; see ${logFile}`);
}

/** SIGTERM (Next stops gracefully, a --cpu-prof profile gets written), SIGKILL after 10 s. */
/**
 * The production build of this tree as it is now: rebuilt unless the last build was made from the
 * same files (its stamp, written beside BUILD_ID). A build kept only because it exists would
 * measure older code. Its output goes to standard error: a bench's standard output is its report.
 */
export async function ensureBuild(log: (msg: string) => void): Promise<void> {
  const stampFile = path.join(ROOT, ".next", "once-build-stamp");
  const stamp = treeStamp();
  if (existsSync(path.join(ROOT, ".next", "BUILD_ID")) && existsSync(stampFile))
    if (readFileSync(stampFile, "utf8") === stamp) return;
  log("the production build is missing or older than this tree: running `npm run build`");
  const build = spawn("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", 2, "inherit"] });
  const [code] = (await once(build, "exit")) as [number | null];
  if (code !== 0) throw new Error(`npm run build failed (${code})`);
  writeFileSync(stampFile, stamp);
}

/**
 * What the build is made from: the files git tracks and their uncommitted changes, outside what it
 * never reads (the docs, the lab, the end-to-end tests, the examples), so a bench writing
 * docs/benchmarks.md, or a commit of it, does not make the next bench rebuild.
 */
const NOT_BUILT = ["docs", "lab", "e2e", "examples", "*.md"].map((p) => `:(exclude)${p}`);

function treeStamp(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });
  const hash = (text: string) => createHash("sha256").update(text).digest("hex");
  const committed = hash(git("ls-files", "--stage", "--", ".", ...NOT_BUILT));
  return `${committed} ${hash(git("diff", "HEAD", "--", ".", ...NOT_BUILT))}`;
}

/**
 * The production build (built if missing), a database of its own and one instance as `npm start`
 * runs it on `port` (with its payment worker), for as long as `use` runs; everything is stopped
 * after, whatever `use` does.
 */
export async function withOneInstance<T>(
  step: (msg: string) => void,
  port: number,
  use: (instance: Instance, db: Database) => Promise<T>,
): Promise<T> {
  await ensureBuild(step);
  const db = await startDatabase({ webhookPort: port });
  try {
    const instance = await startInstance({
      port,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
    });
    try {
      return await use(instance, db);
    } finally {
      await instance.stop();
    }
  } finally {
    await db.stop();
  }
}
