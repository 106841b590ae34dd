// `npx tsx lab/bench/http/profile-slow-attack.ts [connections] [seconds]`: what slow-body sockets
// cost the server when nothing else runs. One instance as `npm start` runs it, started under
// `--cpu-prof`, is held by `connections` (4 000 unless told) slow-body sockets for `seconds` (30):
// each sends a checkout's headers declaring a 4 KiB body, then a byte every 10 s, is answered
// `408` at the body deadline and opened again (lab/bench/http/slow-attack.ts). Printed: the
// server's CPU over the attack, per slow socket answered, and where it went (by package and by
// function, from the samples taken during the attack). A measurement to read before changing the
// path a request takes before its body is in, not a test.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runBench } from "../fail";
import { ensureBuild, startDatabase, startInstance } from "./cluster";
import { cpuMsOf } from "./cpu";
import { profileMarkdown, summariseProfile } from "./profile";
import { startSlowAttack } from "./slow-attack";

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

await runBench("profile-slow-attack", async (step) => {
  const connections = Number(process.argv[2] ?? 4000);
  const seconds = Number(process.argv[3] ?? 30);
  if (!(connections > 0) || !(seconds > 0)) {
    console.error("usage: npx tsx lab/bench/http/profile-slow-attack.ts [connections] [seconds]");
    process.exit(2);
  }
  await ensureBuild(step);
  const port = Number(process.env.BENCH_HTTP_PORT ?? 3300);
  const db = await startDatabase({ webhookPort: port });
  const dir = mkdtempSync(path.join(os.tmpdir(), "once-slow-prof-"));
  try {
    const instance = await startInstance({
      port,
      databaseUrl: db.url,
      providerUrl: db.providerUrl,
      nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    });
    let window: { fromUs: number; toUs: number };
    let cpuMs: number;
    let answered: number;
    try {
      step(`opening ${connections} slow-body connections`);
      const attack = startSlowAttack(port, connections, undefined);
      await attack.ready;
      step(`holding them for ${seconds} s`);
      const cpuBefore = cpuMsOf([instance.pid]);
      const answeredBefore = Object.values(attack.answers()).reduce((a, b) => a + b, 0);
      window = { fromUs: nowUs(), toUs: 0 };
      await sleep(seconds * 1000); // the attack's own pace: the hold is the measurement
      window.toUs = nowUs();
      cpuMs = cpuMsOf([instance.pid]) - cpuBefore;
      answered = Object.values(attack.answers()).reduce((a, b) => a + b, 0) - answeredBefore;
      attack.stop();
    } finally {
      await instance.stop(); // SIGTERM: node writes the profile as it exits
    }
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error("no CPU profile was written (the server did not exit cleanly)");
    const summary = summariseProfile(path.join(dir, file), window);
    console.log(
      `${connections} slow-body connections for ${seconds} s: ${answered} answered (408) and opened again; the server's CPU ${cpuMs.toFixed(0)} ms = ${(cpuMs / (seconds * 1000)).toFixed(2)} cores, ${(cpuMs / Math.max(1, answered)).toFixed(3)} ms per slow socket answered\n`,
    );
    console.log(profileMarkdown(summary, Math.max(1, answered), 30));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.stop();
  }
});
