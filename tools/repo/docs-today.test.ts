// The user docs describe the system as it is today. History lives in git and the CHANGELOGs, so
// the README and docs/ name no issue, no pass of work, no commit and no directory of the machine
// they were written on; and the few counts and lists they state about the code are read back from
// the code here.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter(Boolean);
const USER_DOCS = tracked.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f));

/** What belongs to the build's history, not to a user's page. */
const DIARY =
  /\b[Ii]ssues? [0-9]|\b([0-9]+(st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|this) pass\b/;
/** A change told as a story: what a figure was before a migration, what earlier runs found. */
const BEFORE_AFTER = /\b(before|after|since) migration [0-9]|\bsince reverted\b|\bearlier runs?\b/i;
/** A commit: seven or more hex digits with a letter and a digit (code in backticks is exempt). */
const COMMIT = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b/;
/** A commit as code, alone in backticks: a build named by its commit is history too. */
const COMMIT_CODE = /`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}`/;
/** A directory of the machine the docs were written on, in prose or in code. */
const MACHINE_PATH = /(^|[^\w.~-])\/(work|home|Users|root|tmp)\//;

function diaryLines(file: string): string[] {
  const found: string[] = [];
  read(file)
    .split("\n")
    .forEach((line, i) => {
      const prose = line.replace(/`[^`]*`/g, "");
      if (
        DIARY.test(prose) ||
        BEFORE_AFTER.test(prose) ||
        COMMIT.test(prose) ||
        COMMIT_CODE.test(line) ||
        MACHINE_PATH.test(line)
      )
        found.push(`${file}:${i + 1}: ${line.trim().slice(0, 100)}`);
    });
  return found;
}

describe("the user docs describe today's system", () => {
  it("name no issue, pass of work or commit", () => {
    expect(USER_DOCS.length).toBeGreaterThan(3);
    const found = USER_DOCS.flatMap(diaryLines);
    expect(found).toEqual([]);
  });

  it("catches a diary line (the check above can fail)", () => {
    expect("Issue 29, eighth pass").toMatch(DIARY);
    expect("| goal (issues 13, 29) |").toMatch(DIARY);
    expect("as the 5th pass measured").toMatch(DIARY);
    expect("docs/benchmarks.md, fifth pass").toMatch(DIARY);
    expect("a single pass over the list").not.toMatch(DIARY);
    expect("measured on 847af77").toMatch(COMMIT);
    expect("a 1000000-key table, 2026-11-26").not.toMatch(COMMIT);
    expect("Every view is under the 500 ms goal since migration 0009.").toMatch(BEFORE_AFTER);
    expect("## What earlier runs found").toMatch(BEFORE_AFTER);
    expect("the stuck index (migration 0009)").not.toMatch(BEFORE_AFTER);
    expect("this build: `/work/main` at `622419c`").toMatch(COMMIT_CODE);
    expect("this build: `/work/main` at `622419c`").toMatch(MACHINE_PATH);
    expect("*Written by `npm run bench -- --baseline /work/base-847af77`").toMatch(MACHINE_PATH);
    expect("`lab/soak/out/` and `/api/health`").not.toMatch(MACHINE_PATH);
  });

  it("count the engine's main-entry exports as the entry does", () => {
    const entry = read("packages/idempotency/src/index.ts");
    const names = [...entry.matchAll(/export\s*\{([^}]*)\}/g)].flatMap((m) =>
      m[1]!
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean),
    );
    const stated = read("packages/idempotency/CHANGELOG.md").match(
      /main entry exports (\d+) names/,
    );
    expect(stated, "the CHANGELOG states the main entry's size").not.toBeNull();
    expect(Number(stated![1])).toBe(names.length);
  });

  it("show every example app in the README's and the design's layout", () => {
    const examples = [
      ...new Set(
        tracked
          .filter((f) => f.startsWith("examples/"))
          .map((f) => f.split("/").slice(0, 2).join("/")),
      ),
    ];
    expect(examples.length).toBeGreaterThan(0);
    for (const doc of ["README.md", "docs/design.md"]) {
      const text = read(doc);
      for (const example of examples)
        expect(text, `${doc} lists ${example}/`).toContain(`${example}/`);
    }
  });
});
