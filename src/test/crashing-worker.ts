// `npm run worker` (scripts/lib/worker.ts) that kills itself (SIGKILL: no cleanup, no finally)
// right after the provider charged and before the row is marked delivered: the crash test's worst
// moment (src/payments/worker-crash.test.ts), produced for real.
import { runWorker } from "../../scripts/lib/worker";

runWorker({
  hooks: {
    afterCharge: (message, charge) => {
      console.warn(`[worker] crashing after charge ${charge.id} for outbox row ${message.id}`);
      process.kill(process.pid, "SIGKILL");
    },
  },
});
