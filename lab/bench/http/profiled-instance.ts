// One instance as `npm start` runs it, under `--cpu-prof`, on a database of its own, for the
// profiling scripts (profile-route.ts, profile-slow-attack.ts): `measure` loads it and says when
// its measured window began and ended; the profile's samples in that window come back summarised.
// `--keep-profile <file>` keeps the whole .cpuprofile there too, for its call tree (Chrome DevTools,
// speedscope): the summary gives self time only.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Step } from "../fail";
import { ensureBuild, startDatabase, startInstance, type Database, type Instance } from "./cluster";
import { summariseProfile, type ProfileSummary } from "./profile";
import { numberFlag, stringFlag } from "../flags";

export interface Window {
  fromUs: number;
  toUs: number;
}

/** The monotonic clock the profile's timestamps are on, in microseconds. */
export const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profiledInstance<T>(
  step: Step,
  options: { paymentJobs?: boolean },
  measure: (instance: Instance, db: Database) => Promise<{ window: Window; result: T }>,
): Promise<{ summary: ProfileSummary; result: T }> {
  await ensureBuild(step);
  const port = numberFlag("port", 3300);
  const db = await startDatabase({ webhookPort: port });
  const dir = mkdtempSync(path.join(os.tmpdir(), "once-prof-"));
  try {
    const instance = await startInstance({
      port,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
      nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
      ...(options.paymentJobs === undefined ? {} : { paymentJobs: options.paymentJobs }),
    });
    let measured: { window: Window; result: T };
    try {
      measured = await measure(instance, db);
    } finally {
      await instance.stop(); // SIGTERM: node writes the profile as it exits
    }
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error("no CPU profile was written (the server did not exit cleanly)");
    const keep = stringFlag("keep-profile");
    if (keep) copyFileSync(path.join(dir, file), keep);
    return {
      summary: summariseProfile(path.join(dir, file), measured.window),
      result: measured.result,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.stop();
  }
}
