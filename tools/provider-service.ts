// Starts the simulated payment provider (services/provider/main.ts) as a child process: for
// `npm run dev` / `npm start`, the tests, Playwright and the soak. Its database must exist (the
// service applies its schema); it listens on `port` (0: a free one) and we resolve once it says
// where. Stopped by its pid, through the handle we hold.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { stopChild } from "./process";

const ROOT = path.resolve(import.meta.dirname, "..");

export interface ProviderServiceOptions {
  databaseUrl: string;
  port?: number;
  /**
   * Where it posts its events, and the secret it signs them with. Unset: events wait in its books.
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
    DEMO_PROVIDER_FAILURE_RATE: String(options.failureRate ?? 0),
    DEMO_PROVIDER_TIMEOUT_RATE: String(options.timeoutRate ?? 0),
    ...(options.duplicateRate !== undefined
      ? { DEMO_PROVIDER_DUPLICATE_RATE: String(options.duplicateRate) }
      : {}),
    ...(options.webhook
      ? {
          PROVIDER_WEBHOOK_URL: options.webhook.url,
          PROVIDER_WEBHOOK_SECRET: options.webhook.secret,
        }
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
