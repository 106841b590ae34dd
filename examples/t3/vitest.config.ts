import { defineConfig } from "vitest/config";

// One file at a time: each starts its own PostgreSQL and `next start`, on two shared cores.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
