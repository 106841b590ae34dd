// `npx tsx lab/bench/http/profile-slow-attack.ts [connections] [seconds]`: what slow-body sockets
// cost the server when nothing else runs. One instance as `npm start` runs it, started under
// `--cpu-prof`, is held by `connections` (4 000 unless told) slow-body sockets for `seconds` (30):
// each sends a checkout's headers declaring a 4 KiB body, then a byte every 10 s, is answered
// `408` at the body deadline and opened again (lab/bench/http/slow-attack.ts). Printed: the
// server's CPU over the attack, per slow socket answered, and where it went (by package and by
// function, from the samples taken during the attack). A measurement to read before changing the
// path a request takes before its body is in, not a test.
import { setTimeout as sleep } from "node:timers/promises";
import { runBench } from "../fail";
import { cpuMsOf } from "./cpu";
import { profileMarkdown } from "./profile";
import { nowUs, profiledInstance } from "./profiled-instance";
import { startSlowAttack } from "./slow-attack";

await runBench("profile-slow-attack", async (step) => {
  const connections = Number(process.argv[2] ?? 4000);
  const seconds = Number(process.argv[3] ?? 30);
  if (!(connections > 0) || !(seconds > 0)) {
    console.error("usage: npx tsx lab/bench/http/profile-slow-attack.ts [connections] [seconds]");
    process.exit(2);
  }
  const { summary, result } = await profiledInstance(step, {}, async (instance) => {
    step(`opening ${connections} slow-body connections`);
    const attack = startSlowAttack(instance.port, connections, undefined);
    await attack.ready;
    step(`holding them for ${seconds} s`);
    const answeredSoFar = () => Object.values(attack.answers()).reduce((a, b) => a + b, 0);
    const cpuBefore = cpuMsOf([instance.pid]);
    const answeredBefore = answeredSoFar();
    const fromUs = nowUs();
    await sleep(seconds * 1000); // the attack's own pace: the hold is the measurement
    const window = { fromUs, toUs: nowUs() };
    const cpuMs = cpuMsOf([instance.pid]) - cpuBefore;
    const answered = answeredSoFar() - answeredBefore;
    attack.stop();
    return { window, result: { cpuMs, answered } };
  });
  const { cpuMs, answered } = result;
  console.log(
    `${connections} slow-body connections for ${seconds} s: ${answered} answered (408) and opened again; the server's CPU ${cpuMs.toFixed(0)} ms = ${(cpuMs / (seconds * 1000)).toFixed(2)} cores, ${(cpuMs / Math.max(1, answered)).toFixed(3)} ms per slow socket answered\n`,
  );
  console.log(profileMarkdown(summary, Math.max(1, answered), 30));
});
