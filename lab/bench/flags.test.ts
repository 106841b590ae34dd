import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { choiceFlag, listFlag, numberFlag, numberListFlag, stringFlag } from "./flags";

/** Calls one function of flags.ts in a process of its own, as a bench would: its exit and stderr. */
function inABench(call: string) {
  const run = spawnSync(
    "npx",
    ["tsx", "-e", `import("./lab/bench/flags.ts").then((f) => f.${call})`],
    {
      encoding: "utf8",
    },
  );
  return { status: run.status, stderr: run.stderr.trim() };
}

describe("bench flags", () => {
  it("reads --name N and --name=N, and falls back when absent", () => {
    expect(numberFlag("slices", 4, ["--slices", "8"])).toBe(8);
    expect(numberFlag("rate-share", 0.6, ["x", "--rate-share=0.25"])).toBe(0.25);
    expect(numberFlag("slices", 4, ["--slice-seconds", "9"])).toBe(4);
    expect(stringFlag("keep", ["--keep", "a.cpuprofile"])).toBe("a.cpuprofile");
  });

  it("reads lists, numbers in lists and choices among known values", () => {
    expect(listFlag("routes", ["a", "b"], ["--routes", "new keys,replays"])).toEqual([
      "new keys",
      "replays",
    ]);
    expect(listFlag("routes", ["a", "b"], [])).toEqual(["a", "b"]);
    expect(numberListFlag("connections", [16], ["--connections=40,400"])).toEqual([40, 400]);
    expect(choiceFlag("paths", ["direct", "edge"], ["--paths", "edge"])).toEqual(["edge"]);
    expect(choiceFlag("paths", ["direct", "edge"], [])).toEqual(["direct", "edge"]);
  });

  it("stops a bench with one sentence on a choice it does not know", () => {
    expect(inABench('choiceFlag("paths", ["direct", "edge"], ["--paths", "edg"])')).toEqual({
      status: 2,
      stderr: "--paths: unknown edg (direct, edge)",
    });
  });

  it("stops a bench with one sentence on a bad value", () => {
    expect(inABench('numberFlag("slices", 4, ["--slices", "many"])')).toEqual({
      status: 2,
      stderr: '--slices needs a number ≥ 0, got "many"',
    });
  });
});
