// One PostgreSQL and one `next start` of this app's production build for all test files, the
// Next.js examples' shared setup (tools/examples/next-app.ts): APP_URL and DATABASE_URL, as the
// README's conformance file finds them.
import path from "node:path";
import { nextExampleSetup } from "../../../tools/examples/next-app";

// What `npm run db:push` creates for the Post model (the idempotency models come from the
// package's SQL): Prisma's schema engine, which db push needs, cannot be downloaded here.
const POST_TABLE = `
CREATE TABLE "Post" (
  "id" SERIAL NOT NULL,
  "name" TEXT NOT NULL,
  "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updatedAt" TIMESTAMP(3) NOT NULL,
  CONSTRAINT "Post_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Post_name_idx" ON "Post"("name");`;

export default nextExampleSetup(
  path.resolve(import.meta.dirname, ".."),
  POST_TABLE
);
