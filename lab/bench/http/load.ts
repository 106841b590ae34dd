// One slice of load: autocannon against one or more instances, recording every response's latency
// and status ourselves (autocannon's own histogram keeps only 2xx latencies, and slices must be
// merged), and the servers' CPU time before and after.
//
// A measured slice sends a fixed number of requests and waits for every answer. A slice that ran
// for a fixed time would abandon up to `connections` requests in flight when the clock ran out,
// and the server would spend their CPU in the next slice: at 256 connections, most of a second of
// work charged to whichever path came next.
import autocannon from "autocannon";
import { cpuMsOf } from "./cpu";
import { EXPECTED_STATUSES, requestsFor, type Scenario } from "./scenarios";

export interface Slice {
  latenciesMs: number[];
  statuses: Record<number, number>;
  /** Socket errors and timeouts (no HTTP status at all). */
  socketErrors: number;
  unexpected: number;
  wallMs: number;
  cpuMs: number;
  /** PostgreSQL's CPU time (postmaster and backends) over the slice. */
  dbCpuMs: number;
}

export interface Target {
  ports: readonly number[];
  /** The servers whose CPU time counts (all instances running, busy or not). */
  pids: readonly number[];
  /** PostgreSQL's postmaster. */
  dbPid: number;
  productId: string;
  replayKey: string;
  /**
   * Servers of their own for some scenarios: `floor` (floor-server.ts), `baseline` (another
   * build, --baseline). Such a scenario is sent there, and its server CPU is that process's.
   */
  elsewhere?: Partial<Record<Scenario, { port: number; pid: number }>>;
}

/**
 * Either a number of requests (measured slices) or a duration (warm-ups, whose tail is not
 * measured).
 */
export type Amount = { requests: number } | { seconds: number };

export async function runSlice(
  target: Target,
  scenario: Scenario,
  connections: number,
  amount: Amount,
): Promise<Slice> {
  const own = target.elsewhere?.[scenario];
  const urls = (own ? [own.port] : target.ports).map((port) => `http://127.0.0.1:${port}`);
  // The payment worker(s) after the first pid count for every scenario.
  const pids = own ? [own.pid, ...target.pids.slice(1)] : target.pids;
  const latenciesMs: number[] = [];
  const statuses: Record<number, number> = {};
  const expected = EXPECTED_STATUSES[scenario];
  let unexpected = 0;
  const cpuBefore = cpuMsOf(pids);
  const dbCpuBefore = cpuMsOf([target.dbPid]);
  const started = performance.now();
  const instance = autocannon({
    // Round-robin: connection i talks to urls[i % urls.length].
    url: urls.length === 1 ? urls[0]! : urls,
    connections,
    ...("requests" in amount
      ? { amount: Math.max(amount.requests, connections), duration: 0 }
      : { duration: amount.seconds }),
    timeout: 10,
    requests: requestsFor(scenario, target.productId, connections, target.replayKey),
  });
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    latenciesMs.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (!expected.includes(status)) unexpected++;
  });
  const result = await instance;
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsOf(pids) - cpuBefore;
  const dbCpuMs = cpuMsOf([target.dbPid]) - dbCpuBefore;
  return {
    latenciesMs,
    statuses,
    socketErrors: result.errors + result.timeouts,
    unexpected,
    wallMs,
    cpuMs,
    dbCpuMs,
  };
}

export function mergeSlices(a: Slice | undefined, b: Slice): Slice {
  if (!a) return b;
  const statuses = { ...a.statuses };
  for (const [status, n] of Object.entries(b.statuses))
    statuses[Number(status)] = (statuses[Number(status)] ?? 0) + n;
  return {
    latenciesMs: a.latenciesMs.concat(b.latenciesMs),
    statuses,
    socketErrors: a.socketErrors + b.socketErrors,
    unexpected: a.unexpected + b.unexpected,
    wallMs: a.wallMs + b.wallMs,
    cpuMs: a.cpuMs + b.cpuMs,
    dbCpuMs: a.dbCpuMs + b.dbCpuMs,
  };
}

export interface Figures {
  p50: number;
  p99: number;
  /**
   * Answers a second with a status the path expects (EXPECTED_STATUSES): a 503 refusal is answered
   * in a fraction of a checkout's time, so counting it would let a server that refuses more look
   * faster.
   */
  perSecond: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number;
  responses: number;
  /** Non-2xx answers by status, e.g. "409×12". */
  non2xx: string;
  errors: number;
}

export function figuresOf(s: Slice): Figures {
  const sorted = Float64Array.from(s.latenciesMs).sort();
  const at = (p: number) =>
    sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
      : NaN;
  const responses = sorted.length;
  const non2xx = Object.entries(s.statuses)
    .filter(([status]) => Number(status) >= 300)
    .map(([status, n]) => `${status}×${n}`)
    .join(", ");
  return {
    p50: at(50),
    p99: at(99),
    perSecond: ((responses - s.unexpected) / s.wallMs) * 1000,
    cpuMsPerRequest: responses ? s.cpuMs / responses : NaN,
    dbCpuMsPerRequest: responses ? s.dbCpuMs / responses : NaN,
    responses,
    non2xx:
      [non2xx, s.socketErrors ? `socket errors×${s.socketErrors}` : ""]
        .filter(Boolean)
        .join(", ") || "–",
    errors: s.unexpected + s.socketErrors,
  };
}
