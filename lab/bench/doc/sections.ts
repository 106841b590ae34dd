// The sections of docs/benchmarks.md that the benches write (`npm run bench:doc`), in the order
// they run: each is one bench command, whose standard output (its Markdown report; progress goes
// to standard error) becomes the section between its markers.

export interface BenchSection {
  /** The marker's name: `<!-- bench:<id> -->` … `<!-- /bench:<id> -->`. */
  id: string;
  /** The npm script and its arguments, as a reader would type them after `npm run`. */
  script: string;
  args: readonly string[];
  /** Runs only when asked by name (it needs something the default run does not have). */
  optIn?: string;
}

export const SECTIONS: readonly BenchSection[] = [
  { id: "engine", script: "bench", args: [] },
  { id: "baseline", script: "bench", args: ["--baseline"], optIn: "--baseline DIR" },
  { id: "http", script: "bench:http", args: [] },
  { id: "overload", script: "bench:overload", args: [] },
  { id: "crowd", script: "bench:overload", args: ["--crowd"] },
  { id: "slow-bodies", script: "bench:overload", args: ["--slow-bodies"] },
  { id: "floods", script: "bench:overload", args: ["--floods"] },
  { id: "payments", script: "bench:payments", args: [] },
  { id: "queues", script: "bench:queues", args: [] },
  { id: "reconcile", script: "bench:reconcile", args: ["1000000"] },
  { id: "admin", script: "bench:admin", args: [] },
  { id: "capacity", script: "bench:capacity", args: [] },
  { id: "retention", script: "bench:retention", args: [] },
];

/** The command a section runs, as its stamp shows it. */
export function commandOf(section: BenchSection, baseline?: string): string {
  const args = section.id === "baseline" ? ["--baseline", baseline ?? "DIR"] : section.args;
  return ["npm run", section.script, ...(args.length ? ["--", ...args] : [])].join(" ");
}
