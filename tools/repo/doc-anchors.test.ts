// Every link into a Markdown page's section (`<page>.md#<section>`, or `#<section>` within the page)
// from the README and docs/ lands on a heading that exists, slugged as GitHub slugs it: a heading
// renamed (or a bench section moved) breaks the test, not the reader's click.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter(Boolean);
const PAGES = tracked.filter((f) => f === "README.md" || /^docs\/[^/]+\.md$/.test(f));

/** GitHub's heading anchor: lower case, punctuation dropped but `-` and `_`, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), "utf8").replace(/```[\s\S]*?```/g, "");
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const broken: string[] = [];
  for (const [, target, anchor] of text.matchAll(/\]\(([^)\s#]*\.md|)#([^)\s]+)\)/g)) {
    const page = target
      ? path.posix.normalize(path.posix.join(path.posix.dirname(file), target))
      : file;
    if (!tracked.includes(page)) continue; // a missing page is doc-paths.test.ts's to report
    if (!anchorsOf(page).has(decodeURIComponent(anchor!)))
      broken.push(`${file}: ${target || "(this page)"}#${anchor} has no such heading`);
  }
  return broken;
}

describe("links into a page's sections", () => {
  it("land on a heading of that page", () => {
    expect(PAGES.length).toBeGreaterThan(3);
    expect(PAGES.flatMap(brokenLinks)).toEqual([]);
  });

  it("slug headings as GitHub does (the check above can fail)", () => {
    expect(slug("A crowd that does not wait (`npm run bench:overload -- --crowd`)")).toBe(
      "a-crowd-that-does-not-wait-npm-run-benchoverload------crowd",
    );
    expect(slug("The dashboard at 100 000 keys (`npm run bench:admin`)")).toBe(
      "the-dashboard-at-100-000-keys-npm-run-benchadmin",
    );
    expect(anchorsOf("README.md").has("no-such-heading")).toBe(false);
  });
});
