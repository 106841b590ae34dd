// Docs a test keeps true: every repository path the docs and the code's comments name exists.
//
// What counts as a path (kept narrow on purpose, so the test has no false alarms to silence):
// - in Markdown (README.md, docs/*.md, packages/idempotency/README.md): each word inside
//   backticks or a fenced block, and each relative link target `](…)`;
// - in code (.ts, .tsx, .js, .cjs outside examples/t3), each word of a comment (`//`, `/* */`,
//   `*`);
// a word is a path when it starts with one of the repository's tracked top-level folders
// (`src/`, `docs/`, `packages/`, …) or, for a link, is relative to the Markdown file; or when it
// is a bare Markdown file name (`design.md`), which must be some tracked file's name. Trailing
// punctuation, `:line` and `#anchor` are dropped; words with a wildcard or a placeholder (`*`, `<`,
// `{`, `$`, `…`) are not literal paths and are skipped, as are URLs. In a fenced block only the
// first word of an unindented line or of a comment line counts (a layout tree, a snippet's file
// name). Inside a package a path may also be relative to it (BASES below). A path
// that git ignores (generated output: dist/, .next/, lab/bench/results/) may be absent.
//
// It exists when it is a tracked file or a folder of tracked files: a file only on this machine
// does not count, since a fresh clone would not have it.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" });

const tracked = git("ls-files", "-z").split("\0").filter(Boolean);
const existing = new Set<string>(tracked);
for (const file of tracked)
  for (let dir = path.posix.dirname(file); dir !== "."; dir = path.posix.dirname(dir))
    existing.add(dir);
const topFolders = new Set(tracked.filter((f) => f.includes("/")).map((f) => f.split("/")[0]!));
const trackedNames = new Set(tracked.map((f) => path.posix.basename(f)));
/**
 * Where else a file's paths may be relative to: a package's files to the package; the engine's
 * README also to examples/t3, whose files its snippets are (the t3 stage checks they are equal).
 */
const BASES: [prefix: string, bases: string[]][] = [
  ["packages/idempotency/README.md", ["packages/idempotency", "examples/t3"]],
  ["packages/idempotency/", ["packages/idempotency"]],
  ["examples/minimal/", ["examples/minimal"]],
];

const MARKDOWN = tracked.filter(
  (f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f) || f === "packages/idempotency/README.md",
);
const CODE = tracked.filter(
  (f) => /\.(ts|tsx|js|cjs|mjs)$/.test(f) && !f.startsWith("examples/t3/"),
);

const NOT_LITERAL = /[*<>{}$…|]/;

interface Mention {
  file: string;
  line: number;
  path: string;
  /** Resolve against the mentioning file's folder first (a Markdown link). */
  relative: boolean;
}

/** A word's path, or null when it is not one (see the header). */
function asPath(word: string, relative: boolean): string | null {
  let candidate = word
    .replaceAll("`", "")
    .replace(/^[("'[]+/, "")
    .replace(/'s$/, "")
    .replace(/[)"'\],.;:!?]+$/, "");
  if (
    NOT_LITERAL.test(candidate) ||
    /^[a-z]+:/i.test(candidate) ||
    candidate.startsWith("/") ||
    candidate.startsWith("~")
  )
    return null;
  candidate = candidate.replace(/#.*$/, "").replace(/:\d+(-\d+)?$/, "");
  if (!candidate || candidate.includes("//")) return null;
  if (relative) return candidate;
  const top = candidate.split("/")[0]!;
  if (candidate.includes("/") && topFolders.has(top)) return candidate;
  if (/^[\w.-]+\.md$/.test(candidate)) return candidate;
  return null;
}

function mentionsIn(file: string): Mention[] {
  const lines = readFileSync(path.join(ROOT, file), "utf8").split("\n");
  const found: Mention[] = [];
  const add = (line: number, word: string, relative = false) => {
    const p = asPath(word, relative);
    if (p) found.push({ file, line, path: p, relative });
  };
  const markdown = file.endsWith(".md");
  let inBlockComment = false;
  let inFence = false;
  lines.forEach((text, index) => {
    const line = index + 1;
    if (markdown) {
      if (text.trimStart().startsWith("```")) inFence = !inFence;
      else if (inFence) {
        // A layout tree's entry (an unindented first word) or a file named by a comment line
        // (`// src/server/api/trpc.ts` atop a snippet); the descriptions beside them are prose.
        const named = /^(?:\s*(?:\/\/|#)\s+)?(\S+)/.exec(text)?.[1];
        if (named && (!/^\s/.test(text) || /^\s*(\/\/|#)\s/.test(text))) add(line, named);
      }
      for (const [, code] of text.matchAll(/`([^`]+)`/g))
        for (const word of code!.split(/\s+/)) add(line, word);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) add(line, target!, true);
      return;
    }
    let comment = "";
    const trimmed = text.trim();
    if (inBlockComment || trimmed.startsWith("/*")) {
      comment = trimmed;
      inBlockComment =
        !trimmed.includes("*/") ||
        (trimmed.startsWith("/*") && trimmed.indexOf("*/") < 2 && !trimmed.endsWith("*/"));
    } else {
      const at = text.search(/(^|\s)\/\/\s/);
      if (at >= 0) comment = text.slice(at);
    }
    for (const word of comment.split(/\s+/)) if (word.length > 3) add(line, word);
  });
  return found;
}

function exists(mention: Mention): boolean {
  const dir = path.posix.dirname(mention.file);
  const bases = mention.relative
    ? [dir]
    : ["", ...(BASES.find(([prefix]) => mention.file.startsWith(prefix))?.[1] ?? [])];
  for (const base of bases) {
    const full = path.posix.normalize(path.posix.join(base, mention.path)).replace(/\/$/, "");
    if (existing.has(full)) return true;
  }
  if (!mention.relative && /^[\w.-]+\.md$/.test(mention.path))
    return trackedNames.has(mention.path);
  return false;
}

// Whether git ignores it, as a file or as a folder (a pattern ending in a slash matches only
// folders).
function ignoredByGit(candidate: string): boolean {
  try {
    const folder = candidate.endsWith("/") ? candidate : `${candidate}/`;
    return git("check-ignore", "--no-index", candidate, folder).trim() !== "";
  } catch {
    return false;
  }
}

describe("every repository path named in the docs and in code comments exists", () => {
  it("finds the paths it is meant to check", () => {
    const readme = mentionsIn("README.md").map((m) => m.path);
    expect(readme).toContain("src/server/config.ts");
    expect(readme).toContain("docs/design.md");
    expect(MARKDOWN).toContain("packages/idempotency/README.md");
    expect(CODE.length).toBeGreaterThan(100);
  });

  it.each([...MARKDOWN, "(code comments)"])("%s", (source) => {
    const files = source === "(code comments)" ? CODE : [source];
    const missing = files
      .flatMap(mentionsIn)
      .filter((m) => !exists(m) && !ignoredByGit(m.path))
      .map((m) => `${m.file}:${m.line} names ${m.path}`);
    expect(missing).toEqual([]);
  });
});
