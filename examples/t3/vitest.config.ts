import { defineConfig } from "vitest/config";

// One PostgreSQL and one `next start` for all files (test/global-setup.ts), which run one at a
// time.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
