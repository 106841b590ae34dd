import path from "node:path";
import { defineConfig } from "vitest/config";

// Two projects: the app (src/, scripts/) and the engine package (packages/idempotency), each with
// its own PostgreSQL started by its global setup.
export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias: { "@": path.resolve(import.meta.dirname, "src") } },
        test: {
          name: "app",
          include: ["src/**/*.test.ts", "scripts/**/*.test.ts", "soak/**/*.test.ts", "bench/**/*.test.ts"],
          globalSetup: ["src/test/global-setup.ts"],
          pool: "forks",
          // Integration tests share one PostgreSQL server; each file gets its own database.
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Demo mode: the fixtures are the demo accounts and tokens (the doors' own tests pass
          // `{ demo: false }` where they test production).
          env: { NODE_ENV: "test", DEMO_MODE: "1", SESSION_SECRET: "test-session-secret-0123456789" },
        },
      },
      "packages/idempotency",
    ],
  },
});
