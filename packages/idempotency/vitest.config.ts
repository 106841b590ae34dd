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
    // A timeout only catches a hang: the suite must pass on a machine busy with other work
    // (a test that spawns a CLI or runs 1 000 fuzz cases there takes minutes, not seconds).
    testTimeout: 180_000,
    hookTimeout: 240_000,
  },
});
