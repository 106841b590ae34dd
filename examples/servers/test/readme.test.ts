// The package's README and its reference pages (docs/*.md) show each adapter whole in blocks marked
// `// example: <path>` (a path from the repository's root): each block is that file, byte for
// byte, so what an adopter copies is what these tests run.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
const pkg = path.join(root, "packages", "idempotency");
const readme = [
  path.join(pkg, "README.md"),
  ...readdirSync(path.join(pkg, "docs")).map((name) => path.join(pkg, "docs", name)),
]
  .map((file) => readFileSync(file, "utf8"))
  .join("\n");
const blocks = [...readme.matchAll(/```\w+\n\/\/ example: (\S+)\n([\s\S]*?)```/g)].map(
  ([, file, code]) => ({ file: file!, code: code! }),
);

describe("the package README's and reference pages' whole examples are the examples' files", () => {
  it("has the blocks (schema, engine, Hono, Next.js, node:http)", () => {
    expect(blocks.map((b) => b.file)).toEqual(
      expect.arrayContaining([
        "examples/servers/prisma/schema.prisma",
        "examples/servers/src/engine.ts",
        "examples/servers/src/hono.ts",
        "examples/servers/src/node-http.ts",
        "examples/plain/src/app/api/reports/route.ts",
      ]),
    );
  });

  it.each(blocks.map((b) => [b.file, b] as const))("%s", (_file, block) => {
    const file = readFileSync(path.join(root, block.file), "utf8");
    expect(block.code).toBe(file);
  });
});
