// ONCE_LAB_ROUTES opens a door (the lab's procedures, such as the benches' control, a mutation
// without idempotency): only demo mode may, so a production server handed it refuses to start, the
// front door's script before Next.js and the app's configuration alike.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/server/config";
import { loadLabRoutes } from "./lab-routes";

const ROOT = path.resolve(import.meta.dirname, "../..");
const CONTROL = "lab/bench/http/control-route.ts";

describe("the front door's lab routes", () => {
  it("are none unless asked for", async () => {
    expect(await loadLabRoutes({ DEMO_MODE: "1" }, ROOT)).toBeUndefined();
    expect(await loadLabRoutes({ NODE_ENV: "production" }, ROOT)).toBeUndefined();
  });

  it("are the named lab module's in demo mode", async () => {
    const lab = await loadLabRoutes(
      { NODE_ENV: "production", DEMO_MODE: "1", ONCE_LAB_ROUTES: CONTROL },
      ROOT,
    );
    expect(lab?.procedures).toEqual(["benchControl.placeOrder", "benchBare.catalog"]);
    expect(typeof lab?.handlerFor).toBe("function");
  });

  it("are refused by a production configuration", async () => {
    for (const env of [
      { NODE_ENV: "production", ONCE_LAB_ROUTES: CONTROL },
      { NODE_ENV: "production", DEMO_MODE: "0", ONCE_LAB_ROUTES: CONTROL },
      { DEMO_MODE: "false", ONCE_LAB_ROUTES: CONTROL },
    ]) {
      await expect(loadLabRoutes(env, ROOT)).rejects.toThrow(/ONCE_LAB_ROUTES needs DEMO_MODE=1/);
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/ONCE_LAB_ROUTES needs DEMO_MODE=1/);
    }
  });

  it("must be a module of lab/ that exports them", async () => {
    const demo = { DEMO_MODE: "1" };
    await expect(
      loadLabRoutes({ ...demo, ONCE_LAB_ROUTES: "scripts/lib/lab-routes.ts" }, ROOT),
    ).rejects.toThrow(/must name a module in/);
    await expect(
      loadLabRoutes({ ...demo, ONCE_LAB_ROUTES: "lab/../src/server/config.ts" }, ROOT),
    ).rejects.toThrow(/must name a module in/);
    await expect(
      loadLabRoutes({ ...demo, ONCE_LAB_ROUTES: "lab/bench/http/scenarios.ts" }, ROOT),
    ).rejects.toThrow(/exports no labRoutes/);
  });

  it("stop a production `npm start` server with one sentence, before it listens", async () => {
    const run = promisify(execFile)(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts/front-door.ts"), "start", "-p", "0"],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_ENV: "production", DEMO_MODE: "", ONCE_LAB_ROUTES: CONTROL },
      },
    );
    await expect(run).rejects.toMatchObject({
      code: 1,
      stdout: expect.not.stringContaining("Ready"),
      stderr: expect.stringContaining(
        "[front-door] cannot start: invalid configuration: ONCE_LAB_ROUTES needs DEMO_MODE=1",
      ),
    });
  });
});
