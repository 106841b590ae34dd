// One production server of a real build, as the e2e specs and the Next.js examples' tests run it
// (this app behind its front door, as `npm start` runs it; an example app with `next start`): on a free loopback port (or the one given), with the variables it is given, its output
// kept (so a test can look for what it logged), stopped by its handle.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort, stopChild } from "../process";

const root = path.resolve(import.meta.dirname, "..", "..");

export interface NextInstance {
  baseURL: string;
  process: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** SIGTERM, and the exit it leads to (a kill after the grace period). */
  stop(): Promise<void>;
}

export interface NextStartOptions {
  /** The app's folder, with its build (`.next`) and its own `next`: this repository by default. */
  app?: string;
  /** A free one by default. */
  port?: number;
  /** Also print what it prints, as it comes (a server that runs for someone watching). */
  echo?: boolean;
}

/** Starts `next start` with `env` (added to the environment); resolves once it says it is ready. */
export async function startNextInstance(
  env: Record<string, string>,
  { app = root, port, echo = false }: NextStartOptions = {},
): Promise<NextInstance> {
  if (!existsSync(path.join(app, ".next", "BUILD_ID")))
    throw new Error(`no production build in ${app}: run \`next build\` there first`);
  const listen = port ?? (await freePort());
  const listenArgs = ["start", "-p", String(listen), "-H", "127.0.0.1"];
  // This app runs behind its front door (scripts/front-door.ts: Next.js as a custom server), as
  // `npm start` runs it; another app (the examples) is plain `next start`.
  const command =
    app === root
      ? ["--import", "tsx", path.join(root, "scripts/front-door.ts"), ...listenArgs]
      : [path.join(app, "node_modules/next/dist/bin/next"), ...listenArgs];
  const child = spawn(process.execPath, command, {
    cwd: app,
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: "1",
      ...env,
      NODE_ENV: "production",
      PORT: String(listen),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let announceReady!: () => void;
  const readyLine = new Promise<void>((resolve) => (announceReady = resolve));
  for (const [stream, echoTo] of [
    [child.stdout!, process.stdout],
    [child.stderr!, process.stderr],
  ] as const) {
    stream.on("data", (chunk: Buffer) => {
      if (echo) echoTo.write(chunk);
      output += chunk.toString();
      if (/Ready in/.test(output)) announceReady();
    });
  }
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`next start exited (${code}) before it was ready:\n${output}`);
  });
  await Promise.race([readyLine, exited]);
  exited.catch(() => {}); // a later exit is the caller's business
  return {
    baseURL: `http://127.0.0.1:${listen}`,
    process: child,
    output: () => output,
    stop: () => stopChild(child),
  };
}
