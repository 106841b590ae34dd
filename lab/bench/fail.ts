// Benches never die silently: whatever fails (a rejected promise, an exception thrown from a
// timer or an event handler, a failed child) is printed with the step it happened in, and the
// process exits non-zero. Without this, an error thrown outside the main promise chain under load
// once left only "Node.js v20.20.2" as the last line.

export type Step = (name: string) => void;

function fail(bench: string, step: string, error: unknown): never {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`\n[${bench}] FAILED during "${step}":\n${detail}\n`);
  process.exit(1);
}

/** Runs a bench's main; `step` names what it is doing, for the failure message. */
export async function runBench(bench: string, main: (step: Step) => Promise<void>): Promise<void> {
  let current = "start";
  const step: Step = (name) => {
    current = name;
    process.stderr.write(`[${bench}] ${name}\n`);
  };
  process.on("unhandledRejection", (error) => fail(bench, current, error));
  process.on("uncaughtException", (error) => fail(bench, current, error));
  try {
    await main(step);
  } catch (error) {
    fail(bench, current, error);
  }
}
