// Every block of TypeScript in the package README is a file of an example (`// example: <path>`,
// the file whole) or lines of one (`// in <path>`, in the file's order), from the repository's
// root; the examples' stages type-check those files against the packed tarball and run them. So
// every block an adopter copies from the README compiles and runs.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
const readme = readFileSync(path.join(root, "packages", "idempotency", "README.md"), "utf8");
const blocks = [...readme.matchAll(/```(ts|tsx|typescript)\n([\s\S]*?)```/g)].map(([, , code]) => {
  const [marker = "", ...rest] = code!.split("\n");
  const match = /^\/\/ (example:|in) (examples\/\S+)$/.exec(marker);
  return { marker, kind: match?.[1], file: match?.[2], code: rest.join("\n") };
});

/** Whether `lines` appear in `file`, in that order (each a whole line of it). */
function inOrder(file: string, lines: string[]): boolean {
  const fileLines = file.split("\n");
  let at = 0;
  for (const line of lines) {
    at = fileLines.indexOf(line, at);
    if (at < 0) return false;
    at++;
  }
  return true;
}

describe("the package README's TypeScript blocks are the examples' files", () => {
  it("has the engine and a block for each framework", () => {
    expect(blocks.map((b) => b.file)).toEqual(
      expect.arrayContaining([
        "examples/servers/src/engine.ts",
        "examples/frameworks/src/express/app.ts",
        "examples/frameworks/src/fastify/app.ts",
        "examples/frameworks/src/nestjs/app.ts",
      ]),
    );
  });

  it("keeps the first page within 250 lines, the whole README within 500", () => {
    const lines = readme.split("\n");
    expect(lines.length).toBeLessThanOrEqual(500);
    const reference = lines.indexOf("## Reference");
    expect(reference).toBeGreaterThan(0);
    expect(reference).toBeLessThanOrEqual(250);
  });

  it.each(blocks.map((b) => [b.marker, b] as const))("%s", (_marker, block) => {
    expect(block.file, "a block marked with the example file it is").toBeDefined();
    const file = readFileSync(path.join(root, block.file!), "utf8");
    if (block.kind === "example:") expect(block.code).toBe(file);
    else expect(inOrder(file, block.code.trimEnd().split("\n"))).toBe(true);
  });

  it("protects each framework's handler with at most 5 added lines, marked", () => {
    for (const app of ["express", "fastify", "nestjs"]) {
      const file = readFileSync(path.join(root, "examples/frameworks/src", app, "app.ts"), "utf8");
      const added = file.split("\n").filter((line) => line.endsWith("// idempotency"));
      expect(added.length).toBeGreaterThan(0);
      expect(added.length).toBeLessThanOrEqual(5);
      // Nothing else in the app names the package: its handler is as it was.
      const others = file
        .split("\n")
        .filter((line) => !line.endsWith("// idempotency") && !line.trim().startsWith("//"));
      expect(others.join("\n")).not.toMatch(/idempoten|orders\.context/i);
    }
  });
});
