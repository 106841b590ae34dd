// `npm test` on a machine without HAProxy, PgBouncer or Chromium: installs them where it may, or
// stops with one sentence naming them and the command; nothing to do when they are there.
import { describe, expect, it } from "vitest";
import { CHROMIUM, HAPROXY, PGBOUNCER, planPackages } from "./system-packages";

const none = { exists: () => false };
const all = [HAPROXY, CHROMIUM, PGBOUNCER, HAPROXY];

describe("planPackages", () => {
  it("does nothing when every program is there", () => {
    expect(planPackages(all, { exists: () => true, canInstall: false }, "npm test")).toEqual({
      kind: "ready",
    });
  });

  it("installs each missing package once where we are root with apt-get", () => {
    const present = new Set([CHROMIUM.bin]);
    expect(
      planPackages(all, { exists: (f) => present.has(f), canInstall: true }, "npm test"),
    ).toEqual({
      kind: "install",
      packages: ["haproxy", "pgbouncer"],
      command: "apt-get update && apt-get install -y haproxy pgbouncer",
    });
  });

  it("otherwise stops with one sentence naming what to install", () => {
    const plan = planPackages(all, { ...none, canInstall: false }, "npm test");
    expect(plan).toEqual({
      kind: "stop",
      message:
        "npm test needs Debian's haproxy, chromium, pgbouncer, not installed here: run `sudo apt-get update && apt-get install -y haproxy chromium pgbouncer` (or .ci/run, which installs everything).",
    });
  });
});
