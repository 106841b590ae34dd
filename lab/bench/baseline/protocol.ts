// The messages between the baseline bench's coordinator (compare.ts) and its workers (worker.ts).

/** The first message: which checkout the worker loads, and its own database. */
export interface WorkerStart {
  dir: string;
  engineEntry: string;
  url: string;
  /** Prefixes the business rows' values, so each side's rows tell whose they are. */
  label: string;
}

/** What a worker can be asked to run, one call after another. */
export type Op = "prisma" | "engine" | "handTransaction" | "handFloor" | "handPrisma";

export type WorkerRequest =
  | { kind: "warm"; op: Op; calls: number }
  | { kind: "run"; op: Op; calls: number }
  | { kind: "stop" };

export type WorkerReply =
  { kind: "ready" } | { kind: "done"; latenciesMs: number[] } | { kind: "failed"; error: string };
