// `npm run bench:doc [-- <section> ...] [--baseline DIR] [--list]`: runs the benches and writes
// their reports into docs/benchmarks.md, each between its markers under a stamp that names the
// command, the date and the machine. No section named: every section but the opt-in ones (the
// baseline runs too when --baseline names another checkout). Each section is written as soon as
// its bench ends, so a run stopped half-way keeps what it measured; a bench that prints no report
// leaves its section as it was, and the run exits 1 after the others.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describeMachine, span } from "./machine";
import { SECTIONS, commandOf, type BenchSection } from "./sections";
import { splice } from "./splice";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const DOC = path.join(ROOT, "docs/benchmarks.md");
const USAGE = `usage: npm run bench:doc -- [section ...] [--baseline DIR] [--list]
sections: ${SECTIONS.map((s) => s.id).join(", ")}`;

interface Request {
  sections: BenchSection[];
  baseline?: string;
}

function refuse(message: string): never {
  console.error(`npm run bench:doc: ${message}\n${USAGE}`);
  process.exit(2);
}

function parse(argv: readonly string[]): Request {
  const names: string[] = [];
  let baseline: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--baseline") {
      baseline = argv[++i];
      if (!baseline || !existsSync(baseline)) refuse(`--baseline needs a checkout's directory`);
    } else names.push(argv[i]!);
  }
  for (const name of names)
    if (!SECTIONS.some((s) => s.id === name)) refuse(`no section is called "${name}"`);
  if (names.includes("baseline") && !baseline) refuse(`the baseline section needs --baseline DIR`);
  const wanted = (s: BenchSection) =>
    names.length ? names.includes(s.id) : !s.optIn || (s.id === "baseline" && !!baseline);
  return { sections: SECTIONS.filter(wanted), baseline };
}

/** Runs one bench; its standard output is the report, its standard error passes through. */
function run(section: BenchSection, baseline?: string): Promise<{ report: string; code: number }> {
  const args = section.id === "baseline" ? ["--baseline", baseline!] : [...section.args];
  const child = spawn("npm", ["run", "--silent", section.script, "--", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let report = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (report += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ report, code: code ?? (signal ? 128 : 1) }));
  });
}

async function writeSection(section: BenchSection, baseline?: string): Promise<boolean> {
  const command = commandOf(section, baseline);
  process.stderr.write(`\n[bench:doc] ${section.id}: ${command}\n`);
  // The stamp names the baseline by its role: the doc names no directory of this machine.
  const stamped = commandOf(
    section,
    section.id === "baseline" ? "<an earlier checkout>" : undefined,
  );
  const machine = describeMachine();
  const started = new Date();
  const { report, code } = await run(section, baseline);
  if (!report.trim()) {
    process.stderr.write(`[bench:doc] ${command} printed no report (exit ${code}): kept as was\n`);
    return false;
  }
  const exit = code === 0 ? "" : ` · exited ${code}: a check it prints failed`;
  const stamp = `*Written by \`${stamped}\`, ${span(started, new Date())}, on ${machine}${exit}.*`;
  writeFileSync(DOC, splice(readFileSync(DOC, "utf8"), section.id, `${stamp}\n\n${report}`));
  process.stderr.write(`[bench:doc] ${section.id} written (exit ${code})\n`);
  return true;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--list")) {
    for (const s of SECTIONS) console.log(`${s.id}\t${commandOf(s)}${s.optIn ? " (opt-in)" : ""}`);
    return;
  }
  const request = parse(argv);
  const failed: string[] = [];
  for (const section of request.sections)
    if (!(await writeSection(section, request.baseline))) failed.push(section.id);
  if (failed.length) {
    console.error(`npm run bench:doc: no report from ${failed.join(", ")}`);
    process.exitCode = 1;
  }
}

await main();
