// Prisma 7 reads the database's URL here (not in schema.prisma). `prisma generate` does not need
// it; `prisma migrate` does.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/app" },
});
