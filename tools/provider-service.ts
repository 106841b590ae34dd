// Starts the simulated payment provider (services/provider/main.ts) as a child process: for
// `npm run dev` / `npm start`, the tests, Playwright and the soak. Its database must exist (the
// service applies its schema); it listens on `port` (0: a free one) and we resolve once it says
// where. Stopped by its pid, through the handle we hold.
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
}

export interface ProviderService {
  /** Its base URL, e.g. http://127.0.0.1:4242. */
  url: string;
  port: number;
  child: ChildProcess;
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
  // Its own variables only: the shop's (its DATABASE_URL above all) are none of its business.
  const env: NodeJS.ProcessEnv = {
    NODE_ENV: process.env.NODE_ENV,
    PATH: process.env.PATH,
    TMPDIR: process.env.TMPDIR,
    PROVIDER_DATABASE_URL: options.databaseUrl,
    PROVIDER_PORT: String(options.port ?? 0),
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
  // `node --import tsx`, not the tsx CLI: the pid we hold is the service's own.
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "services/provider/main.ts")],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  createInterface({ input: child.stderr! }).on("line", log);
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<{ url: string; port: number }>((resolve, reject) => {
    lines.on("line", (line) => {
      const match = LISTENING.exec(line);
      if (match) resolve({ url: match[1]!, port: Number(match[2]) });
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
  const { url, port } = await listening;
  // Nobody restarts it: an exit we did not ask for is said at once, or a test would only see
  // payments that never come.
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping)
      log(`the payment provider exited (${signal ?? code}) unasked: its output above says why`);
  });
  return {
    url,
    port,
    child,
    expectExit: () => {
      stopping = true;
    },
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
}
