// HAProxy on the repository's edge configuration (deploy/haproxy/edge.cfg) in front of the
// bench's instances: the file a deployment copies is the file the bench measures. Each instance
// gets at most `maxconn` requests at a time; the rest wait up to `queueMs` in HAProxy's queue and
// are then refused there, `503 store_busy` with Retry-After, without reaching Next.js.
import { spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { acceptsConnections, waitFor } from "../../../tools/process";
import { failIfItDies, ROOT } from "./cluster";

export const EDGE_CONFIG = path.join(ROOT, "deploy/haproxy/edge.cfg");

export interface EdgeOptions {
  port: number;
  /** The two instances' ports (the configuration names two servers). */
  instances: [number, number];
  maxconn: number;
  queueMs: number;
  retryAfterSeconds: number;
}

export interface Edge {
  port: number;
  pid: number;
  /**
   * How long each of the edge's own refusals took there, in ms: HAProxy's `Ta` (from the request's
   * first byte to the answer's last) of every logged `503`. HAProxy drops a log line rather than
   * wait for a full pipe, so a few may be missing under load.
   */
  refusalsMs: () => number[];
  stop: () => Promise<void>;
}

/**
 * From HAProxy's HTTP log lines (`client [date] frontend backend/server TR/Tw/Tc/Tr/Ta status …`),
 * the `Ta` of each 503.
 */
export function refusalTimesMs(log: string): number[] {
  return log
    .split("\n")
    .map((line) => line.split(" "))
    .filter((fields) => fields[5] === "503")
    .map((fields) => Number(fields[4]!.split("/")[4]!.replace("+", "")));
}

export async function startEdge(o: EdgeOptions): Promise<Edge> {
  const logFile = path.join(os.tmpdir(), `once-bench-edge-${o.port}.log`);
  const log = createWriteStream(logFile);
  // -db: in the foreground, a child of the bench, stopped by its pid.
  const child = spawn("haproxy", ["-db", "-f", EDGE_CONFIG], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ONCE_EDGE_BIND: `127.0.0.1:${o.port}`,
      ONCE_APP1: `127.0.0.1:${o.instances[0]}`,
      ONCE_APP2: `127.0.0.1:${o.instances[1]}`,
      ONCE_EDGE_MAXCONN: String(o.maxconn),
      ONCE_EDGE_QUEUE_MS: String(o.queueMs),
      ONCE_EDGE_RETRY_AFTER: String(o.retryAfterSeconds),
    },
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  await waitFor(
    `HAProxy on ${o.port} (log: ${logFile})`,
    () => acceptsConnections(o.port),
    10_000,
    child,
  );
  return {
    port: o.port,
    pid: child.pid!,
    refusalsMs: () => refusalTimesMs(readFileSync(logFile, "utf8")),
    stop: failIfItDies(child, `HAProxy on ${o.port}`, logFile),
  };
}
