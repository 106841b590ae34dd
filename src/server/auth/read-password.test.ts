// A password piped to `npm run users`: what a script sends (printf, echo, a here-string, the two
// answers to the prompt, a file saved on Windows) is the password without its line endings.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readPipedPassword } from "./read-password";

const piped = (...chunks: string[]) =>
  readPipedPassword(Readable.from(chunks.map((c) => Buffer.from(c))));

describe("readPipedPassword", () => {
  it.each([
    ["printf '%s'", ["correct horse battery"]],
    ["echo", ["correct horse battery\n"]],
    ["a Windows line ending", ["correct horse battery\r\n"]],
    ["the prompt's two answers", ["correct horse battery\ncorrect horse battery\n"]],
    [
      "the two answers with Windows line endings",
      ["correct horse battery\r\ncorrect horse battery\r\n"],
    ],
    [
      "the two answers, the last without its ending",
      ["correct horse battery\ncorrect horse battery"],
    ],
    [
      "chunks split inside a line ending",
      ["correct horse battery\r", "\ncorrect horse ", "battery\r\n"],
    ],
  ])("%s: the password alone", async (_how, chunks) => {
    expect(await piped(...chunks)).toBe("correct horse battery");
  });

  it("keeps the spaces in and around the password: only the line ending goes", async () => {
    expect(await piped("  spaced out pass \n")).toBe("  spaced out pass ");
  });

  it("refuses two different lines: the confirmation does not match", async () => {
    await expect(piped("correct horse battery\ncorrect horse batterz\n")).rejects.toThrow(
      "The two passwords differ.",
    );
  });

  it("refuses more than two lines, rather than store a newline or guess which line is meant", async () => {
    await expect(piped("one\none\none\n")).rejects.toThrow(
      "Pipe the password on one line (or the same line twice), not 3 lines.",
    );
  });

  it("takes one line ending off, not every one: an empty line before the end is a second line", async () => {
    await expect(piped("correct horse battery\n\n")).rejects.toThrow("The two passwords differ.");
  });
});
