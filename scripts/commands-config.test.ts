// Each command validates only the configuration it uses, and says what is wrong in one sentence:
// the real scripts, run as the operator runs them, with nothing in their environment but what
// the test gives. `npm run db:setup` used to parse the server's whole configuration and die with a
// ConfigError's stack trace outside demo mode, for want of the webhook's secret.
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../src/test/database";
import { startWorker } from "../src/test/worker-process";
import { stopChild } from "../tools/process";

const ROOT = path.resolve(import.meta.dirname, "..");
const t = useTestDatabase({ poolMax: 2 });
const SECRET = "a-webhook-secret-of-at-least-32-characters";

/** Only what a shell gives any command: no NODE_ENV, no DEMO_MODE, no secrets. */
const bare = (): Record<string, string> => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  TMPDIR: process.env.TMPDIR ?? "/tmp",
});

async function run(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, script)],
      {
        cwd: ROOT,
        env: env as NodeJS.ProcessEnv,
        timeout: 90_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** One sentence on stderr: one line, naming `what`, and no stack trace. */
function expectOneSentence(stderr: string, what: RegExp) {
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(stderr).not.toMatch(/^\s+at /m);
}

/** An empty database beside the test's own, on the same server. */
async function emptyDatabase(): Promise<string> {
  const name = `${t.name}_empty`;
  await t.db.$executeRawUnsafe(`CREATE DATABASE "${name}"`);
  return t.url.replace(/\/[^/?]+$/, `/${name}`);
}

describe("npm run db:setup", () => {
  it(
    "with only DATABASE_URL, outside demo mode, migrates and seeds (no demo rows)",
    { timeout: 120_000 },
    async () => {
      const url = await emptyDatabase();
      const result = await run("scripts/db-setup.ts", { ...bare(), DATABASE_URL: url });
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toMatch(/\[db\] migrated and seeded/);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const migrations = await client.query(
          `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`,
        );
        expect(migrations.rowCount).toBeGreaterThanOrEqual(9);
        expect(
          (await client.query(`SELECT count(*)::int AS n FROM "User" WHERE demo`)).rows[0].n,
        ).toBe(0);
      } finally {
        await client.end();
        await t.db.$executeRawUnsafe(
          `DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`,
        );
      }
    },
  );

  it.each([
    [{}, /^\[db:setup\] cannot start: DATABASE_URL is not set/],
    [
      { DATABASE_URL: "localhost:5432/once" },
      /^\[db:setup\] cannot start: invalid configuration: DATABASE_URL must be a postgresql:\/\/ URL/,
    ],
  ])("%j: one sentence, a non-zero exit", { timeout: 60_000 }, async (env, sentence) => {
    const result = await run("scripts/db-setup.ts", { ...bare(), ...env });
    expect(result.code).not.toBe(0);
    expectOneSentence(result.stderr, sentence);
  });
});

describe("npm run worker", () => {
  it.each([
    [{}, /^\[worker\] cannot start: PAYMENTS_WEBHOOK_SECRET is not set/],
    [
      { PAYMENTS_WEBHOOK_SECRET: SECRET, OUTBOX_MAX_ATTEMPTS: "many" },
      /^\[worker\] cannot start: invalid configuration: OUTBOX_MAX_ATTEMPTS/,
    ],
  ])(
    "outside demo mode with %j: one sentence, a non-zero exit",
    { timeout: 60_000 },
    async (env, sentence) => {
      const result = await run("scripts/worker.ts", { ...bare(), DATABASE_URL: t.url, ...env });
      expect(result.code).not.toBe(0);
      expectOneSentence(result.stderr, sentence);
    },
  );

  it(
    "starts whatever the server's own variables say (they are not its business)",
    { timeout: 60_000 },
    async () => {
      const env: Record<string, string> = {
        ...bare(),
        DATABASE_URL: t.url,
        PAYMENTS_WEBHOOK_SECRET: SECRET,
        PAYMENTS_PROVIDER_SECRET_KEY: `sk_test_${randomBytes(24).toString("hex")}`,
        TRUSTED_PROXIES: "lots",
        DEMO_ALLOW_REMOTE: "maybe",
        HOST: " ",
      };
      const worker = await startWorker(env, 45_000);
      await stopChild(worker.child);
      expect(worker.output()).not.toMatch(/cannot start/);
    },
  );
});
