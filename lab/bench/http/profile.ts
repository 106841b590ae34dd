// Where the server's CPU goes: a V8 CPU profile (`node --cpu-prof`) reduced to self time per
// function and per package. Next's production chunks are minified bundles, so positions in
// .next/ are mapped back through their source maps to the original file (and the package it
// belongs to) before grouping.
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  functions: { name: string; where: string; pkg: string; selfMs: number }[];
  packages: { pkg: string; selfMs: number }[];
}

const maps = new Map<string, SourceMap | null>();
function sourceMapFor(file: string): SourceMap | null {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`;
    maps.set(
      file,
      existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : null,
    );
  }
  return maps.get(file)!;
}

/** The original file, line and name of a frame: through the source map for bundled chunks. */
function locate(frame: CallFrame): { file: string; line: number; name: string } {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url.startsWith("file://"))
    return { file: frame.url, line: frame.lineNumber + 1, name };
  const file = fileURLToPath(frame.url);
  const map = file.includes("/.next/") ? sourceMapFor(file) : null;
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as
    { originalSource?: string; originalLine?: number; name?: string } | undefined;
  if (!entry?.originalSource) return { file, line: frame.lineNumber + 1, name };
  return {
    file: decodeURIComponent(entry.originalSource),
    line: (entry.originalLine ?? 0) + 1,
    name: entry.name ?? name,
  };
}

/** The package a file belongs to: the groups the profile table reports. */
export function packageOf(file: string, name: string): string {
  // (program), (garbage collector), (root): V8's own pseudo-frames, which have no file.
  if (name.startsWith("(") && !file)
    return name === "(garbage collector)" ? "V8 garbage collector" : "V8/native";
  if (file.startsWith("node:") || file === "") return "node core";
  const rules: [RegExp, string][] = [
    [/node_modules\/next\/|\/\.next\//, "next"],
    [/node_modules\/@trpc\//, "trpc"],
    [/node_modules\/(@prisma|\.prisma|prisma)\/|src\/generated\/prisma/, "prisma"],
    [/node_modules\/(pg|pg-[a-z-]+|postgres-[a-z-]+)\//, "pg"],
    [/node_modules\/zod\//, "zod"],
    [/node_modules\/(pino|pino-[a-z-]+|sonic-boom)\//, "pino"],
    [/src\/server\/idempotency\/|packages\/idempotency\//, "engine"],
    [/src\//, "app"],
  ];
  for (const [pattern, pkg] of rules) if (pattern.test(file)) return pkg;
  const other = /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(file);
  return other ? other[1]! : "other";
}

/**
 * Self time per function and package, from samples taken between `fromUs` and `toUs` (profile
 * clock).
 */
export function summariseProfile(
  file: string,
  window?: { fromUs: number; toUs: number },
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  return group(selfUs, byId);
}

function group(selfUs: Map<number, number>, byId: Map<number, ProfileNode>): ProfileSummary {
  const functions = new Map<string, { name: string; where: string; pkg: string; selfMs: number }>();
  const packages = new Map<string, number>();
  let totalMs = 0;
  for (const [id, us] of selfUs) {
    const where = locate(byId.get(id)!.callFrame);
    if (where.name === "(idle)") continue; // waiting for I/O is not CPU
    const pkg = packageOf(where.file, where.name);
    const shortFile = where.file.replace(/^.*?(node_modules\/|src\/|\.next\/)/, "$1");
    const key = `${where.name}@${shortFile}:${where.line}`;
    const entry = functions.get(key) ?? {
      name: where.name,
      where: `${shortFile}:${where.line}`,
      pkg,
      selfMs: 0,
    };
    entry.selfMs += us / 1000;
    functions.set(key, entry);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us / 1000);
    totalMs += us / 1000;
  }
  return {
    totalMs,
    functions: [...functions.values()].sort((a, b) => b.selfMs - a.selfMs),
    packages: [...packages.entries()]
      .map(([pkg, selfMs]) => ({ pkg, selfMs }))
      .sort((a, b) => b.selfMs - a.selfMs),
  };
}

export function profileMarkdown(s: ProfileSummary, requests: number, top = 15): string {
  const perReq = (ms: number) => (requests > 0 ? (ms / requests).toFixed(3) : "–");
  const pct = (ms: number) => ((100 * ms) / s.totalMs).toFixed(1);
  return [
    "| package | self ms | % of samples | ms per request |",
    "|---|---:|---:|---:|",
    ...s.packages.map(
      (p) => `| ${p.pkg} | ${p.selfMs.toFixed(0)} | ${pct(p.selfMs)} | ${perReq(p.selfMs)} |`,
    ),
    "",
    `| top ${top} functions by self time | package | where | self ms | % |`,
    "|---|---|---|---:|---:|",
    ...s.functions
      .slice(0, top)
      .map(
        (f) =>
          `| \`${f.name}\` | ${f.pkg} | ${f.where} | ${f.selfMs.toFixed(0)} | ${pct(f.selfMs)} |`,
      ),
  ].join("\n");
}
