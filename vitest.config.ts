import { defineConfig } from "vitest/config";
import { runTempRoot } from "./src/test/temp-root";

// Two projects: the app (src/, scripts/, tools/, lab/) and the engine package
// (packages/idempotency), each with its own PostgreSQL started by its global setup.
export default defineConfig({
  test: {
    projects: [
      {
        // tsconfig.json's paths: `@/` is src/, and `@once/idempotency` (each of its entries) is the
        // engine's source, not its build, so an edit to packages/idempotency/src is what the next
        // test runs (tools/repo/engine-source.test.ts).
        resolve: { tsconfigPaths: true },
        test: {
          name: "app",
          include: [
            "src/**/*.test.ts",
            "services/**/*.test.ts",
            "tools/**/*.test.ts",
            "scripts/**/*.test.ts",
            "lab/**/*.test.ts",
          ],
          globalSetup: ["src/test/global-setup.ts"],
          pool: "forks",
          // Integration tests share one PostgreSQL server; each file gets its own database.
          // A timeout only catches a hang: the suite must pass on a machine busy with other work
          // (a test that spawns a CLI or runs 1 000 fuzz cases there takes minutes, not seconds).
          testTimeout: 180_000,
          hookTimeout: 240_000,
          // Tests build their configuration (src/test/app.ts: demo mode, since the fixtures are the
          // demo accounts and tokens); a test that starts a process gives it its variables.
          setupFiles: ["src/test/setup.ts"],
          // The run's own temp folder (made and removed by the global setup): a run leaves nothing
          // in /tmp, whichever test, or process a test started, made what.
          env: { TMPDIR: runTempRoot() },
        },
      },
      "packages/idempotency",
    ],
  },
});
