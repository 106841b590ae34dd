// The CPU profile phase: a fresh instance started with `node --cpu-prof`, loaded with protected
// new keys; only the samples taken while the measured load ran are summarised (V8's profile clock
// and process.hrtime are both the monotonic clock, so the window lines up).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startInstance, type Database } from "./cluster";
import { figuresOf, runSlice, type Target } from "./load";
import { Pace, settle } from "./pace";
import type { Plan } from "./options";
import { profileMarkdown, summariseProfile } from "./profile";

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profileUnderLoad(
  db: Database,
  plan: Plan,
  replayKey: string,
  log: (m: string) => void,
): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "once-bench-prof-"));
  try {
    const instance = await startInstance({
      port: plan.basePort + plan.maxInstances,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
      nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
      paymentJobs: !plan.paymentsProcess, // the profile is of the server: its payments, if elsewhere, wait in the outbox
    });
    const target: Target = {
      ports: [instance.port],
      pids: [instance.pid],
      dbPid: db.pid,
      productId: db.productId,
      replayKey,
    };
    let requests = 0;
    let window: { fromUs: number; toUs: number };
    try {
      const pace = new Pace(plan.profileSeconds);
      // Warm up (not summarised), and learn the rate to size the profiled slice by.
      pace.record(
        "warm",
        await runSlice(target, "new keys", plan.scaleConnections, { seconds: plan.quick ? 1 : 3 }),
      );
      await settle(target.pids);
      log(
        `profiling protected new keys, ${plan.scaleConnections} connections, ~${plan.profileSeconds} s`,
      );
      const fromUs = nowUs();
      const slice = await runSlice(
        target,
        "new keys",
        plan.scaleConnections,
        pace.amount("warm", "warm", plan.scaleConnections),
      );
      window = { fromUs, toUs: nowUs() };
      requests = figuresOf(slice).responses;
    } finally {
      await instance.stop(); // SIGTERM: node writes the profile as it exits
    }
    const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    if (files.length === 0) return "No CPU profile was written (the server did not exit cleanly).";
    const summary = summariseProfile(path.join(dir, files[0]!), window);
    return `${requests} requests, ${summary.totalMs.toFixed(0)} ms of sampled CPU on the server's main thread (${(summary.totalMs / requests).toFixed(3)} ms per request)\n\n${profileMarkdown(summary, requests)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The summary of the profile a stopped instance wrote to `dir`, over `window`; `dir` is removed. */
export function orderProfileMarkdown(
  dir: string,
  window: { fromUs: number; toUs: number },
  orders: number,
): string {
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    if (files.length === 0) return "No CPU profile was written (the server did not exit cleanly).";
    const summary = summariseProfile(path.join(dir, files[0]!), window);
    return `${orders} paid orders, ${summary.totalMs.toFixed(0)} ms of sampled CPU on the server's main thread (${(summary.totalMs / orders).toFixed(3)} ms per order)\n\n${profileMarkdown(summary, orders)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
