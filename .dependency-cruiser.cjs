// The app's layers (src/), checked in `npm run lint` (`npm run structure`), beside the engine's own
// (packages/idempotency/.dependency-cruiser.cjs). Arrows point down only:
//
//   app/, components/, trpc/   the browser and the routes (Next.js)
//   server/                    what runs on the server: api/ (routers) over the services below
//   shared/                    what both sides speak: reasons, limits, text rules; imports no app code
//
// tools/repo/app-layers.test.ts proves each rule bites on a file that breaks it.
/** A rule that fails the build: nothing in `from` may import anything in `to`. */
const forbid = (name, comment, from, to) => ({ name, severity: "error", comment, from, to });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbid(
      "server-never-imports-the-ui",
      "The server is not built from the browser's code: a page or a component may use the server, never the other way.",
      { path: "^src/server/" },
      { path: "^src/(app|components|trpc)/" },
    ),
    forbid(
      "shared-imports-nothing-of-the-app",
      "src/shared is what the server and the browser both load: it stands on its own (and on libraries).",
      { path: "^src/shared/" },
      { path: "^src/(server|app|components|trpc|test|generated)/" },
    ),
    forbid(
      "services-never-import-routers",
      "Routers sit on top of the services; a service reading a router's select runs upwards. Shared read-models go in the layer below both.",
      { path: "^src/server/", pathNot: "^src/server/api/" },
      { path: "^src/server/api/routers/" },
    ),
    forbid(
      "production-never-imports-test-helpers",
      "src/test is for tests; nothing that ships may need it.",
      { path: "^src/", pathNot: "^src/test/|\\.test\\.tsx?$" },
      { path: "^src/test/" },
    ),
  ],
  options: {
    doNotFollow: { path: "node_modules|^src/generated/" },
    exclude: { path: "\\.test\\.tsx?$" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
