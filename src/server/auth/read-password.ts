// Reading a password for the CLI: from a prompt that does not echo (asked twice) when a person is
// at a terminal, else from stdin (`printf '%s' "$PW" | npm run users -- …`). Never from argv,
// where the shell history and `ps` would keep it.
import type { Readable, Writable } from "node:stream";
import { text } from "node:stream/consumers";

/**
 * The password on a piped stdin: one line, or the same line twice (as the prompt asks for it, so a
 * script that answers the prompt works piped too). Each line without its ending (`\n`, or `\r\n`
 * from Windows): a line ending is never part of the password, as at the prompt.
 */
export async function readPipedPassword(input: Readable): Promise<string> {
  const lines = (await text(input)).replace(/\r?\n$/, "").split(/\r?\n/);
  if (lines.length > 2)
    throw new Error(
      `Pipe the password on one line (or the same line twice), not ${lines.length} lines.`,
    );
  if (lines.length === 2 && lines[0] !== lines[1]) throw new Error("The two passwords differ.");
  return lines[0]!;
}

/** One line typed at the terminal with echo off; Ctrl-C aborts. */
function promptHidden(
  question: string,
  input: NodeJS.ReadStream,
  output: Writable,
): Promise<string> {
  return new Promise((resolve, reject) => {
    // Echo off before the question shows: what is typed (or pasted) at once is not echoed either.
    input.setRawMode(true);
    output.write(question);
    let typed = "";
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off("data", onData);
      output.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString("utf8")) {
        if (char === "\r" || char === "\n") return done();
        if (char === "\u0003") return done(new Error("Cancelled."));
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.resume();
    input.on("data", onData);
  });
}

export async function readPassword(
  input: NodeJS.ReadStream = process.stdin,
  output: Writable = process.stderr,
): Promise<string> {
  if (!input.isTTY) return readPipedPassword(input);
  const first = await promptHidden("Password: ", input, output);
  const again = await promptHidden("Password again: ", input, output);
  if (first !== again) throw new Error("The two passwords differ.");
  return first;
}
