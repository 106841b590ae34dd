// The package's tRPC page (docs/trpc.md) walks a create-t3-app project through adopting the engine, in blocks of
// code that are files (`// file: <path>`) or parts of files (`// in <path>`) of this example. This
// test keeps them the same: a block that differs from its file here fails it.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const app = path.resolve(import.meta.dirname, "..");
const readme = readFileSync(
  path.join(app, "..", "..", "packages", "idempotency", "docs", "trpc.md"),
  "utf8"
);

const blocks = [
  ...readme.matchAll(/```\w+\n\/\/ (file:|in) (\S+)\n([\s\S]*?)```/g),
].map(([, kind, file, code]) => ({ kind, file: file!, code: code! }));

describe("the package README's blocks are this example's files", () => {
  it("has blocks to compare", () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it.each(blocks.map((b) => [`${b.kind} ${b.file}`, b] as const))(
    "%s",
    (_name, block) => {
      const file = readFileSync(path.join(app, block.file), "utf8");
      if (block.kind === "file:") expect(block.code).toBe(file);
      else expect(file).toContain(block.code.trimEnd());
    }
  );
});
