// What a figure was measured on, for the stamp above each section: the figures are ratios to a
// control of the same run, but the reader still needs to know the machine and how busy it was.
import os from "node:os";

export function describeMachine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
  const memory = (os.totalmem() / 1024 ** 3).toFixed(1);
  const load = os.loadavg()[0]!.toFixed(1);
  return `${cpus.length} cores (${model}), ${memory} GiB, load average ${load} at the start · node ${process.version}`;
}

/** `2026-11-28 13:40–13:45 UTC` */
export function span(started: Date, finished: Date): string {
  const day = started.toISOString().slice(0, 10);
  const time = (d: Date) => d.toISOString().slice(11, 16);
  return `${day} ${time(started)}–${time(finished)} UTC`;
}
