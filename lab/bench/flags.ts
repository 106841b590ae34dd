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

/** The comma-separated values after `--name` (`--connections 16,64`); `fallback` when absent. */
export function listFlag(name: string, fallback: readonly string[], argv = process.argv.slice(2)) {
  const raw = stringFlag(name, argv);
  return raw === undefined ? [...fallback] : raw.split(",").filter((item) => item !== "");
}

/** The numbers after `--name` (`--connections 16,64`); a value that is not one stops the bench. */
export function numberListFlag(
  name: string,
  fallback: readonly number[],
  argv = process.argv.slice(2),
) {
  return listFlag(name, fallback.map(String), argv).map((item) =>
    numberFlag(name, 0, [`--${name}`, item]),
  );
}

/** The values of `--name` that are among `known`; any other stops the bench with the list. */
export function choiceFlag<T extends string>(
  name: string,
  known: readonly T[],
  argv = process.argv.slice(2),
): T[] {
  const asked = listFlag(name, known, argv);
  const unknown = asked.filter((item) => !known.includes(item as T));
  if (unknown.length > 0) {
    console.error(`--${name}: unknown ${unknown.join(", ")} (${known.join(", ")})`);
    process.exit(2);
  }
  return asked as T[];
}
