// The app's layers (src/), checked in `npm run lint` (`npm run structure`), beside the engine's own
// (packages/idempotency/.dependency-cruiser.cjs). Arrows point down only:
//
//   app/, components/, trpc/   the browser and the routes (Next.js)
//   server/                    what runs on the server: edge/ (the front door, admission, the API
//                              routes) over api/ (routers) over the services, over http/ (the
//                              kit every route uses: body limits, cross-site checks, refusals)
//   shared/                    what both sides speak: reasons, limits, text rules; imports no app code
//   payments/                  one module beside the shop (outbox, provider client, webhook,
//                              reconciliation) with one entry, index.ts, and its configuration
//                              section, config.ts; the shop builds it with what it needs (database,
//                              engine, settings, logger) and calls that entry
//
// `npm run structure` cruises scripts/, lab/, e2e/, services/ and tools/ too: payments' one entry
// holds for them as for the shop.
// tools/repo/app-layers.test.ts proves each rule bites on a file that breaks it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "server-never-imports-the-ui",
      severity: "error",
      comment:
        "The server is not built from the browser's code: a page or a component may use the server, never the other way.",
      from: { path: "^src/server/" },
      to: { path: "^src/(app|components|trpc)/" },
    },
    {
      name: "shared-imports-nothing-of-the-app",
      severity: "error",
      comment:
        "src/shared is what the server and the browser both load: it stands on its own (and on libraries).",
      from: { path: "^src/shared/" },
      to: { path: "^src/(server|app|components|trpc|test|generated)/" },
    },
    {
      name: "services-never-import-routers",
      severity: "error",
      comment:
        "Routers sit on top of the services; a service reading a router's select runs upwards. Shared read-models go in the layer below both.",
      from: { path: "^src/server/", pathNot: "^src/server/api/" },
      to: { path: "^src/server/api/routers/" },
    },
    {
      name: "only-the-composition-root-uses-the-edge",
      severity: "error",
      comment:
        "src/server/edge is the top of the server (the front door, admission, the API routes): it uses the routers and services, and only the composition root (src/server/app.ts) puts it together. A service reaching up into it runs upwards.",
      from: { path: "^src/server/", pathNot: "^src/server/(edge/|app\\.ts$)" },
      to: { path: "^src/server/edge/" },
    },
    {
      name: "the-http-kit-stands-alone",
      severity: "error",
      comment:
        "src/server/http is the kit below every route (body limits, cross-site checks, refusals, plain errors): it imports nothing else of the server, so the routes, the routers and the edge can all use it.",
      from: { path: "^src/server/http/" },
      to: { path: "^src/server/(?!http/)" },
    },
    {
      name: "production-never-imports-test-helpers",
      severity: "error",
      comment: "src/test is for tests; nothing that ships may need it.",
      from: { path: "^src/", pathNot: "^src/test/|\\.test\\.tsx?$" },
      to: { path: "^src/test/" },
    },
    {
      name: "payments-only-through-its-entry",
      severity: "error",
      comment:
        "Payments is one module with one entry (src/payments/index.ts): the shop, the scripts and the benches use what it exports, never its parts, so its inside can change without them. Its configuration section (src/payments/config.ts: zod and constants) may also be imported alone, as @once/idempotency/config is: every command parses its configuration, the front door's included, and none should load payments to do it.",
      from: { pathNot: "^src/payments/" },
      to: { path: "^src/payments/", pathNot: "^src/payments/(index|config)\\.ts$" },
    },
    {
      name: "payments-imports-nothing-of-the-shop",
      severity: "error",
      comment:
        "Payments stands beside the shop, not inside it: it is handed its database, engine, settings and logger, and imports only libraries, src/shared, the generated Prisma client, and the two HTTP kit modules its webhook answers with (the API's body limit and its problem details), which import nothing but src/shared.",
      from: { path: "^src/payments/" },
      to: {
        path: "^src/(server|app|components|trpc)/",
        pathNot: "^src/server/http/(body-limit|plain-error)\\.ts$",
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules|^src/generated/" },
    exclude: { path: "\\.test\\.tsx?$" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
