// Prisma CLI configuration. Only `prisma generate` runs here (offline, with WebAssembly); the
// migrations are applied by tools/db/migrate.ts. The URL is only read by commands that talk
// to a database, so a placeholder keeps `generate` working without one.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/once" },
});
