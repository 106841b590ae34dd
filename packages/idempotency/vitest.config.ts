// The package's own tests: against a real PostgreSQL the global setup starts, through a Prisma
// client generated from test/support/schema.prisma (the engine's models, pasted as an adopter
// would).
import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "idempotency",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
