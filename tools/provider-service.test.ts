// `npm start`'s provider comes back when it dies: killed by its pid, it is started again on the
// same port (so the shop's PAYMENTS_PROVIDER_URL still reaches it), said in the log; once stopped,
// it stays stopped. Waits are on conditions (the new process answering), never on a timer.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin } from "../src/test/database";
import { isProcessAlive, waitFor } from "./process";
import { startProviderService, type ProviderService } from "./provider-service";

const name = `provider_restart_${randomBytes(6).toString("hex")}`;
let databaseUrl = "";
beforeAll(async () => {
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  databaseUrl = inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);
});
afterAll(async () => {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
});

const answers = async (url: string) => (await fetch(`${url}/health`)).ok;

describe("startProviderService with restart", () => {
  it("starts a killed provider again on the same port, logged, and not after stop()", async () => {
    const lines: string[] = [];
    const service: ProviderService = await startProviderService({
      databaseUrl,
      secretKey: "sk_test_restart_0123456789abcdefghijklmnop",
      restart: true,
      log: (line) => lines.push(line),
    });
    try {
      const first = service.child.pid!;
      expect(await answers(service.url)).toBe(true);
      process.kill(first, "SIGKILL");
      const second = await waitFor("the provider started again", async () => {
        const pid = service.child.pid;
        return pid !== first && (await answers(service.url)) ? pid : undefined;
      });
      expect(isProcessAlive(first)).toBe(false);
      expect(lines.join("\n")).toMatch(/exited \(SIGKILL\) unasked.*starting it again in 1 s/);
      expect(lines.join("\n")).toContain(`started again on ${service.url} (pid ${second})`);
      await service.stop();
      expect(isProcessAlive(second)).toBe(false);
      expect(service.child.pid).toBe(second); // nothing started after stop()
    } finally {
      await service.stop();
    }
  });
});
