import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { choiceFlag, listFlag, numberFlag, numberListFlag, stringFlag } from "./flags";

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
    const run = spawnSync(
      "npx",
      [
        "tsx",
        "-e",
        'import("./lab/bench/flags.ts").then((f) => f.choiceFlag("paths", ["direct", "edge"], ["--paths", "edg"]))',
      ],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe("--paths: unknown edg (direct, edge)");
  });

  it("stops a bench with one sentence on a bad value", () => {
    const run = spawnSync(
      "npx",
      [
        "tsx",
        "-e",
        'import("./lab/bench/flags.ts").then((f) => f.numberFlag("slices", 4, ["--slices", "many"]))',
      ],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe('--slices needs a number ≥ 0, got "many"');
  });
});
