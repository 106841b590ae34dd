// A bench's knobs are flags after `npm run bench:… --` (`npm run bench:capacity -- --slices 8`),
// never environment variables: a flag is seen on the command line that produced a figure, and the
// app's settings stay the only variables anyone has to know.

/** The number after `--name` (or in `--name=N`); `fallback` when absent. A bad value stops the bench. */
export function numberFlag(name: string, fallback: number, argv = process.argv.slice(2)): number {
  const raw = stringFlag(name, argv);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0) {
    console.error(`--${name} needs a number ≥ 0, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

/** The text after `--name` (or in `--name=text`); undefined when absent. */
export function stringFlag(name: string, argv = process.argv.slice(2)): string | undefined {
  const flag = `--${name}`;
  const at = argv.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  if (at === -1) return undefined;
  const arg = argv[at]!;
  if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  const next = argv[at + 1];
  if (next === undefined || next.startsWith("--")) {
    console.error(`${flag} needs a value`);
    process.exit(2);
  }
  return next;
}
