import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname, "src") } },
  test: {
    include: ["src/**/*.test.ts", "scripts/**/*.test.ts", "soak/**/*.test.ts"],
    globalSetup: ["src/test/global-setup.ts"],
    pool: "forks",
    // Integration tests share one PostgreSQL server; each file gets its own database.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: "test", SESSION_SECRET: "test-session-secret-0123456789" },
  },
});
