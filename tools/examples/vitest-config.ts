// The Next.js examples' Vitest configuration (examples/plain, examples/t3 re-export it): one
// PostgreSQL and one `next start` for all files (their test/global-setup.ts), which run one at a
// time.
import { defineConfig } from "vitest/config";

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
