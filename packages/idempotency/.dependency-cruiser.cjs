// The engine's structure, checked in `npm run lint` (`npm run structure -w @once/idempotency`):
// its imports form a pyramid. Arrows point down only, so each layer can be read, tested and
// replaced knowing nothing of the layers above it:
//
//   entry points   index.ts, entry/, trpc/, http/, conformance/   (what adopters import)
//   edges          engine.ts, wrapper.ts, operator.ts, jobs/      (compose the protocol)
//   protocol       protocol/                                       (reserve, decide, execute, wait)
//   services       replay-cache, evictions, counters, pending-releases, unique-violation, reason-of
//   store          store/                                          (the SQL behind the interface)
//   base           constants, brand, config, key, fingerprint, reasons, errors, outcome,
//                  header-names, wait/,
//                  store/types.ts (the record and the store's interface: types every layer speaks)
//
// client/ is the browser side: it may use the base layer's browser-safe modules and nothing
// that touches the database.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "A cycle makes two modules one: neither can be understood or tested without the other.",
      from: {},
      to: { circular: true },
    },
    {
      name: "base-imports-nothing-above",
      severity: "error",
      comment:
        "The base layer (constants, errors, reasons, key, fingerprint, config, outcome, wait/, store/types) is what every layer shares.",
      from: {
        path: "^src/(constants|brand|config|key|fingerprint|reasons|errors|outcome|header-names)\\.ts$|^src/wait/|^src/store/types\\.ts$",
      },
      to: {
        pathNot: "^src/store/types\\.ts$",
        path: "^src/(store|protocol|jobs|trpc|http|client|conformance|entry)/|^src/(replay-cache|evictions|counters|pending-releases|unique-violation|reason-of|engine|wrapper|operator|index)\\.ts$",
      },
    },
    {
      name: "store-knows-only-the-base",
      severity: "error",
      comment:
        "The store speaks SQL; what is cached, evicted, counted or decided is decided above it.",
      from: { path: "^src/store/" },
      to: {
        path: "^src/(protocol|jobs|trpc|http|client|conformance|entry)/|^src/(replay-cache|evictions|counters|pending-releases|unique-violation|reason-of|engine|wrapper|operator|index)\\.ts$",
      },
    },
    {
      name: "services-below-the-protocol",
      severity: "error",
      comment:
        "The replay cache, evictions, counters and the error readers serve the protocol; they never call it.",
      from: {
        path: "^src/(replay-cache|evictions|counters|pending-releases|unique-violation|reason-of)\\.ts$",
      },
      to: {
        path: "^src/(protocol|jobs|trpc|http|client|conformance|entry)/|^src/(engine|wrapper|operator|index)\\.ts$",
      },
    },
    {
      name: "protocol-below-the-edges",
      severity: "error",
      comment:
        "The protocol is written against the store interface and the services; the edges compose it.",
      from: { path: "^src/protocol/" },
      to: {
        path: "^src/(jobs|trpc|http|client|conformance|entry)/|^src/(engine|wrapper|operator|index)\\.ts$",
      },
    },
    {
      name: "edges-below-the-entry-points",
      severity: "error",
      comment: "Nothing inside the engine imports what adopters import.",
      from: { path: "^src/", pathNot: "^src/(index\\.ts|entry/|trpc/|http/|conformance/)" },
      to: { path: "^src/(index\\.ts|entry/|trpc/|http/|conformance/)" },
    },
    {
      name: "client-stays-in-the-browser",
      severity: "error",
      comment:
        "@once/idempotency/client runs in the browser: no database, no server-side protocol.",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: "^src/client/|^src/(constants|reasons|key|fingerprint)\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsConfig: { fileName: "tsconfig.build.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
