// The app's layers (src/), checked in `npm run lint` (`npm run structure`), beside the engine's own
// (packages/idempotency/.dependency-cruiser.cjs). Arrows point down only:
//
//   app/, components/, trpc/   the browser and the routes (Next.js)
//   server/                    what runs on the server: edge/ (the front door, admission, the API
//                              routes) over api/ (routers) over the services
//   shared/                    what both sides speak: reasons, limits, text rules; imports no app code
//   payments/                  one module beside the shop (outbox, provider client, webhook,
//                              reconciliation) with one entry, index.ts, and its configuration
//                              section, config.ts; the shop builds it with what it needs (database,
//                              engine, settings, logger) and calls that entry
//   http/                      the kit below the server and payments alike: body limits, cross-site
//                              checks, refusal counters, plain errors; imports no app code
//
// `npm run structure` cruises scripts/, lab/, e2e/, services/ and tools/ too: payments' one entry
// holds for them as for the shop.
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
      "only-the-composition-root-uses-the-edge",
      "src/server/edge is the top of the server (the front door, admission, the API routes): it uses the routers and services, and only the composition root (src/server/app.ts) puts it together. A service reaching up into it runs upwards.",
      { path: "^src/server/", pathNot: "^src/server/(edge/|app\\.ts$)" },
      { path: "^src/server/edge/" },
    ),
    forbid(
      "the-http-kit-stands-alone",
      "src/http is the kit below every route (body limits, cross-site checks, refusals, plain errors): it imports nothing of the app, so the server's routes, routers and edge and the payments' webhook can all use it.",
      { path: "^src/http/" },
      { path: "^src/(server|payments|app|components|trpc)/" },
    ),
    forbid(
      "production-never-imports-test-helpers",
      "src/test is for tests; nothing that ships may need it.",
      { path: "^src/", pathNot: "^src/test/|\\.test\\.tsx?$" },
      { path: "^src/test/" },
    ),
    forbid(
      "payments-only-through-its-entry",
      "Payments is one module with one entry (src/payments/index.ts): the shop, the scripts and the benches use what it exports, never its parts, so its inside can change without them. Its configuration section (src/payments/config.ts: zod and constants) may also be imported alone, as @once/idempotency/config is: every command parses its configuration, the front door's included, and none should load payments to do it.",
      { pathNot: "^src/payments/" },
      { path: "^src/payments/", pathNot: "^src/payments/(index|config)\\.ts$" },
    ),
    forbid(
      "payments-imports-nothing-of-the-shop",
      "Payments stands beside the shop, not inside it: it is handed its database, engine, settings and logger, and imports only libraries, src/shared, src/http (the kit its webhook answers with) and the generated Prisma client.",
      { path: "^src/payments/" },
      { path: "^src/(server|app|components|trpc)/" },
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
