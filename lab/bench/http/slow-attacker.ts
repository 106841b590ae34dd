// The slow-body attacker as a process of its own (forked by slow-bodies.ts with an IPC channel), so
// its thousands of sockets and timers do not share an event loop with the client that measures the
// server. Arguments: port, count, and a token or nothing. It says `{ ready: true }` once every first
// connection has written its headers and first byte; told "stop", it closes every socket, says what
// the server answered, and exits.
import { startSlowAttack } from "./slow-attack";

const [port, count, token] = process.argv.slice(2);
const attack = startSlowAttack(Number(port), Number(count), token || undefined);
await attack.ready;
process.send!({ ready: true });
process.on("message", (message) => {
  if (message !== "stop") return;
  attack.stop();
  process.send!({ reopened: attack.reopened(), answers: attack.answers() }, () => process.exit(0));
});
