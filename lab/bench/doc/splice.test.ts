import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SECTIONS, commandOf } from "./sections";
import { sectionOf, splice } from "./splice";

const doc = [
  "# title",
  "prose before",
  "<!-- bench:a -->",
  "old a",
  "<!-- /bench:a -->",
  "prose between",
  "<!-- bench:b -->",
  "old b",
  "<!-- /bench:b -->",
  "prose after",
  "",
].join("\n");

describe("a bench's section written between its markers", () => {
  it("replaces that section's body and leaves every other byte alone", () => {
    const written = splice(doc, "a", "\n| new | table |\n\n");
    expect(sectionOf(written, "a")).toBe("| new | table |");
    expect(sectionOf(written, "b")).toBe("old b");
    expect(written.replace("| new | table |", "old a")).toBe(doc);
  });

  it("refuses a missing, repeated or misordered marker, writing nothing", () => {
    expect(() => splice(doc, "c", "x")).toThrow(/<!-- bench:c --> exactly once \(it holds it 0/);
    const twice = doc + "<!-- bench:a -->\n";
    expect(() => splice(twice, "a", "x")).toThrow(/exactly once \(it holds it 2 times\)/);
    const reversed = "<!-- /bench:a -->\n<!-- bench:a -->\n";
    expect(() => splice(reversed, "a", "x")).toThrow(/comes before/);
  });
});

describe("docs/benchmarks.md and the benches that write it", () => {
  const real = readFileSync(
    path.resolve(import.meta.dirname, "../../../docs/benchmarks.md"),
    "utf8",
  );

  it("holds each section's markers once, and names the command that writes it", () => {
    expect(real).toContain("`npm run bench:doc`");
    for (const section of SECTIONS) expect(() => sectionOf(real, section.id)).not.toThrow();
  });

  it("names each section's command as a reader would type it", () => {
    const crowd = SECTIONS.find((s) => s.id === "crowd")!;
    expect(commandOf(crowd)).toBe("npm run bench:overload -- --crowd");
    const engine = SECTIONS.find((s) => s.id === "engine")!;
    expect(commandOf(engine)).toBe("npm run bench");
    const baseline = SECTIONS.find((s) => s.id === "baseline")!;
    expect(commandOf(baseline, "../before")).toBe("npm run bench -- --baseline ../before");
  });
});
