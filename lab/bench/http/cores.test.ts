import { describe, expect, it } from "vitest";
import { coreSplit, onCores } from "./cores";

describe("coreSplit", () => {
  it("gives the servers the cores asked and the load generator every other", () => {
    expect(coreSplit("0", "K", 2)).toEqual({ server: "0", rest: "1" });
    expect(coreSplit("1-2,0", "K", 4)).toEqual({ server: "0,1,2", rest: "3" });
    expect(coreSplit(undefined, "K", 2)).toBeUndefined();
  });

  it("refuses a list that is not one, a core the machine lacks, or every core", () => {
    expect(() => coreSplit("zero", "K", 2)).toThrow('K: "zero" is not a list of cores');
    expect(() => coreSplit("1-0", "K", 2)).toThrow("is not a list of cores");
    expect(() => coreSplit("0,", "K", 2)).toThrow("is not a list of cores");
    expect(() => coreSplit("2", "K", 2)).toThrow("names a core this machine lacks (it has 2)");
    expect(() => coreSplit("0-1", "K", 2)).toThrow("leaves no core for the load generator");
  });
});

describe("onCores", () => {
  it("runs the command through taskset only when given cores", () => {
    expect(onCores("0", "node", ["a.js"])).toEqual(["taskset", ["-c", "0", "node", "a.js"]]);
    expect(onCores(undefined, "node", ["a.js"])).toEqual(["node", ["a.js"]]);
  });
});
