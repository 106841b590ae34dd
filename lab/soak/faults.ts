// The fault schedule, while the clients shop: an instance SIGKILLed every `killEveryMs` (round
// robin) and restarted at once; PostgreSQL restarted once and stopped for `pgStopMs` once. Every
// fault is recorded with its time, for the chart's time axis. The operator's busts and releases
// and the provider's failures run alongside (operator.ts; the provider's rates are the instances'
// env).
import { setTimeout as sleep } from "node:timers/promises";
import type { SoakDatabase } from "./database";
import type { Instances } from "./instances";
import type { Recorder } from "./record";

export interface FaultOptions {
  durationMs: number;
  killEveryMs: number;
  pgRestartAt: number;
  pgStopAt: number;
  pgStopMs: number;
}

const sleepUntil = (rec: Recorder, t: number) => sleep(Math.max(0, t - rec.now()));

export async function runFaults(
  o: FaultOptions,
  rec: Recorder,
  instances: Instances,
  db: SoakDatabase,
): Promise<void> {
  await Promise.all([killLoop(o, rec, instances), databaseFaults(o, rec, db)]);
}

/**
 * Kills on the clock: a restart that takes long (a loaded machine, PostgreSQL away) does not delay
 * the next kill.
 */
async function killLoop(o: FaultOptions, rec: Recorder, instances: Instances): Promise<void> {
  if (o.killEveryMs <= 0) return;
  const restarts: Promise<void>[] = [];
  for (let k = 0; ; k++) {
    const at = (k + 1) * o.killEveryMs;
    if (at >= o.durationMs) break;
    await sleepUntil(rec, at);
    const i = k % instances.ports.length;
    rec.fault("kill", `app${i + 1} (SIGKILL, restarted)`);
    restarts.push(instances.killAndRestart(i));
  }
  await Promise.all(restarts);
}

async function databaseFaults(o: FaultOptions, rec: Recorder, db: SoakDatabase): Promise<void> {
  const events = [
    { at: o.pgRestartAt * o.durationMs, run: () => restart(rec, db) },
    { at: o.pgStopAt * o.durationMs, run: () => outage(rec, db, o.pgStopMs) },
  ]
    .filter((e) => e.at > 0)
    .sort((a, b) => a.at - b.at);
  for (const e of events) {
    await sleepUntil(rec, e.at);
    await e.run();
  }
}

async function restart(rec: Recorder, db: SoakDatabase): Promise<void> {
  rec.fault("pg-restart", "PostgreSQL restarted");
  await db.stop();
  await db.start();
}

async function outage(rec: Recorder, db: SoakDatabase, ms: number): Promise<void> {
  rec.fault("pg-stop", `PostgreSQL stopped for ${Math.round(ms / 1000)} s`);
  await db.stop();
  await sleep(ms); // the outage itself: a duration, not a wait for anything
  await db.start();
  rec.fault("pg-start", "PostgreSQL back");
}
