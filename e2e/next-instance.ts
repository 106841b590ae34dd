// One `next start` of the real production build, as the e2e specs run it: on a free loopback port,
// with the variables it is given, its output kept (so a spec can look for what it logged), stopped
// by its handle.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { freePort } from "../tools/process";
import { stopChild } from "../tools/process";

const root = path.resolve(import.meta.dirname, "..");

export interface NextInstance {
  baseURL: string;
  process: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** SIGTERM, and the exit it leads to (a kill after the grace period). */
  stop(): Promise<void>;
}

/** Starts `next start` with `env` (added to the environment); resolves once it says it is ready. */
export async function startNextInstance(env: Record<string, string>): Promise<NextInstance> {
  if (!existsSync(path.join(root, ".next", "BUILD_ID")))
    throw new Error("no production build: run `npm run build` first");
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      path.join(root, "node_modules/next/dist/bin/next"),
      "start",
      "-p",
      String(port),
      "-H",
      "127.0.0.1",
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        ...env,
        NODE_ENV: "production",
        PORT: String(port),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  let announceReady!: () => void;
  const readyLine = new Promise<void>((resolve) => (announceReady = resolve));
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready in/.test(output)) announceReady();
    });
  }
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`next start exited (${code}) before it was ready:\n${output}`);
  });
  await Promise.race([readyLine, exited]);
  exited.catch(() => {}); // a later exit is the spec's business
  return {
    baseURL: `http://127.0.0.1:${port}`,
    process: child,
    output: () => output,
    stop: () => stopChild(child),
  };
}
