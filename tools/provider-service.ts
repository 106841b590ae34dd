// Starts the simulated payment provider (services/provider/main.ts) as a child process: for
// `npm run dev` / `npm start`, the tests, Playwright and the soak. Its database must exist (the
// service applies its schema); it listens on `port` (0: a free one) and we resolve once it says
// where. Stopped by its pid, through the handle we hold. With `restart` (npm run dev / npm start)
// a provider that dies unasked is started again on the same port, after a wait that doubles while
// it keeps dying, so payments resume without anyone at the terminal.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { stopChild } from "./process";

const ROOT = path.resolve(import.meta.dirname, "..");

/** A shop the provider serves: its id in the provider's books and its secret key. */
export interface ProviderShop {
  id: string;
  secretKey: string;
}

/** The shop's id in the provider's books when the starter names none. */
export const DEFAULT_SHOP_ID = "once";

export interface ProviderServiceOptions {
  databaseUrl: string;
  /**
   * The shop's secret key (what the shop calls with: its PAYMENTS_PROVIDER_SECRET_KEY): the
   * provider serves it as shop `shopId`.
   */
  secretKey: string;
  /** The shop's id in the provider's books (default "once"). */
  shopId?: string;
  /** More shops the provider serves (without webhooks): a test's other merchant. */
  otherShops?: readonly ProviderShop[];
  port?: number;
  /**
   * Where it posts the shop's events, and the secret it signs them with. Unset: events wait in its
   * books.
   */
  webhook?: { url: string; secret: string };
  failureRate?: number;
  timeoutRate?: number;
  duplicateRate?: number;
  /** Its log lines (default: this process's stderr, prefixed by the service itself). */
  log?: (line: string) => void;
  /**
   * Start it again, on the same port, whenever it exits unasked (after RESTART_DELAY_MS, doubling
   * while it keeps failing, up to MAX_RESTART_DELAY_MS), until stop(). Off for tests and benches,
   * which stop and start it themselves.
   */
  restart?: boolean;
}

/** The first restart waits a second: a crash loop then costs a line a second, not a busy CPU. */
export const RESTART_DELAY_MS = 1_000;
/**
 * Each restart that fails (or dies within STEADY_MS) doubles the wait, up to 30 s: a provider
 * that cannot start (its database gone, its port taken) is tried twice a minute, and comes back
 * within 30 s of its cause going away.
 */
export const MAX_RESTART_DELAY_MS = 30_000;
/** A provider that served this long before it died starts its next restart from the first wait. */
export const STEADY_MS = 60_000;

export interface ProviderService {
  /** Its base URL, e.g. http://127.0.0.1:4242. */
  url: string;
  port: number;
  /** The running process (a new one after each restart). */
  readonly child: ChildProcess;
  /**
   * From now on its exit is expected: a shutdown says so first thing, because Ctrl-C reaches the
   * provider too (it is in the terminal's process group) and it may exit before we stop it.
   */
  expectExit(): void;
  stop(): Promise<void>;
}

const LISTENING = /^\[provider\] listening on (http:\/\/\S+:(\d+))$/;

export async function startProviderService(
  options: ProviderServiceOptions,
): Promise<ProviderService> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const env = providerEnv(options);
  const first = await spawnProvider(env, options.port ?? 0, log);
  let child = first.child;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  let delay = RESTART_DELAY_MS;
  // A restart in flight: its exit before listening is a failed start, retried after a longer wait.
  const restart = () => {
    restartTimer = undefined;
    if (stopping) return;
    spawnProvider(env, first.port, log, (started) => (child = started)).then(
      (started) => {
        log(`[provider] started again on ${started.url} (pid ${started.child.pid})`);
        watch(started.child);
      },
      (error: Error) => retry(error.message),
    );
  };
  const retry = (why: string) => {
    if (stopping) return;
    log(`[provider] ${why}; starting it again in ${delay / 1000} s`);
    restartTimer = setTimeout(restart, delay);
    delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
  };
  const watch = (running: ChildProcess) => {
    const startedAt = Date.now();
    running.once("exit", (code, signal) => {
      if (stopping) return;
      const why = `the payment provider exited (${signal ?? code}) unasked: its output above says why`;
      // Nobody restarts it without `restart`: said at once, or a test would only see payments
      // that never come.
      if (!options.restart) return log(why);
      if (Date.now() - startedAt >= STEADY_MS) delay = RESTART_DELAY_MS;
      retry(why);
    });
  };
  watch(child);
  const stopRestarts = () => {
    stopping = true;
    clearTimeout(restartTimer);
  };
  return {
    url: first.url,
    port: first.port,
    get child() {
      return child;
    },
    expectExit: stopRestarts,
    stop: () => {
      stopRestarts();
      return stopChild(child);
    },
  };
}

/** Its own variables only: the shop's (its DATABASE_URL above all) are none of its business. */
function providerEnv(options: ProviderServiceOptions): NodeJS.ProcessEnv {
  return {
    NODE_ENV: process.env.NODE_ENV,
    PATH: process.env.PATH,
    TMPDIR: process.env.TMPDIR,
    PROVIDER_DATABASE_URL: options.databaseUrl,
    PROVIDER_SHOPS: JSON.stringify([
      {
        id: options.shopId ?? DEFAULT_SHOP_ID,
        secretKey: options.secretKey,
        ...(options.webhook ? { webhook: options.webhook } : {}),
      },
      ...(options.otherShops ?? []),
    ]),
    DEMO_PROVIDER_FAILURE_RATE: String(options.failureRate ?? 0),
    DEMO_PROVIDER_TIMEOUT_RATE: String(options.timeoutRate ?? 0),
    ...(options.duplicateRate !== undefined
      ? { DEMO_PROVIDER_DUPLICATE_RATE: String(options.duplicateRate) }
      : {}),
  };
}

/**
 * One provider process on `port` (0: a free one), resolved once it says where it listens; told to
 * `spawned` at once, so a stop meanwhile reaches it.
 */
async function spawnProvider(
  env: NodeJS.ProcessEnv,
  port: number,
  log: (line: string) => void,
  spawned: (child: ChildProcess) => void = () => {},
): Promise<{ child: ChildProcess; url: string; port: number }> {
  // `node --import tsx`, not the tsx CLI: the pid we hold is the service's own.
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "services/provider/main.ts")],
    { cwd: ROOT, env: { ...env, PROVIDER_PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] },
  );
  spawned(child);
  createInterface({ input: child.stderr! }).on("line", log);
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    lines.on("line", (line) => {
      const match = LISTENING.exec(line);
      if (match) resolve({ child, url: match[1]!, port: Number(match[2]) });
      else log(line);
    });
    child.once("exit", (code, signal) =>
      reject(
        new Error(
          `the payment provider exited (${signal ?? code}) before it listened: its output above says why`,
        ),
      ),
    );
  });
}
