// The app's HTTP server: Next.js as a custom server (its documented `next({ dev, dir, hostname,
// port })` + `getRequestHandler()`) behind the front door, src/server/edge/front-door.ts, which
// owns the socket: timeouts a slow client cannot stretch, the peer's address, and refusals written
// before Next.js does any work. `npm start`/`npm run dev` (scripts/serve.ts), Playwright's server,
// the soak and the benches start it as they started `next start`:
//
//   node --import tsx scripts/front-door.ts start|dev -p PORT -H HOST
//
// With ONCE_LAB_ROUTES (demo mode only; `npm run bench:http` sets it) it also serves a lab module's
// tRPC procedures beside the app's (scripts/lib/lab-routes.ts); a production server refuses it.
//
// It prints Next.js's "Ready in" line once it listens. SIGTERM/SIGINT: it stops accepting, and the
// app's own handler (src/server/start.ts, run by instrumentation) stops the jobs, flushes the
// counters and exits.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import next from "next";
import { parsePreferWait } from "@once/idempotency/http";
import { ConfigError } from "../src/server/config";
import { createFrontDoor, type DoorApp, type LabRoutes } from "../src/server/edge/front-door";
import { loadLabRoutes } from "./lib/lab-routes";

const started = performance.now();
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" } },
});
const mode = positionals[0];
if (mode !== "dev" && mode !== "start") {
  console.error("usage: front-door.ts dev|start [-p PORT] [-H HOST]");
  process.exit(2);
}
const dev = mode === "dev";
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname ?? "0.0.0.0";
// Next.js reads NODE_ENV when it loads: what `next start`/`next dev` would set.
const env = process.env as Record<string, string | undefined>;
env.NODE_ENV ??= dev ? "development" : "production";
// Next.js's own server handles no signal here (a custom server's process is ours): the app's
// handler stops the jobs, flushes the counters and exits (src/server/start.ts), in dev too.
env.NEXT_MANUAL_SIG_HANDLE ??= "1";

const root = path.resolve(import.meta.dirname, "..");
// Before Next.js starts: a production server asked for lab routes stops here, with one sentence.
let lab: LabRoutes | undefined;
try {
  lab = await loadLabRoutes(env, root);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`[front-door] cannot start: ${error.message}`);
  process.exit(1);
}
if (lab && dev) {
  console.error("[front-door] cannot start: ONCE_LAB_ROUTES is served by `start` only, not `dev`");
  process.exit(1);
}
// `next` is CommonJS: its function is the module's default export, or the module itself.
const createNext = ((next as unknown as { default?: typeof next }).default ?? next) as typeof next;
const app = createNext({ dev, dir: root, hostname, port });
const handle = app.getRequestHandler();
await app.prepare();

/** The composition root, once instrumentation (or a first request) has made it (src/server/app.ts). */
const APP_SLOT = Symbol.for("once.serverApp");
const appSlot = globalThis as unknown as Record<typeof APP_SLOT, DoorApp | undefined>;

/**
 * The headers next.config.js gives every answer (its `headers()` rule for every path): the door
 * adds them to the answers it writes without Next.js, from the very file Next.js reads.
 */
async function headersOfEveryAnswer(): Promise<Record<string, string>> {
  type Rule = { source: string; headers: { key: string; value: string }[] };
  const config = (await import(pathToFileURL(path.join(root, "next.config.js")).href)) as {
    default: { headers?: () => Promise<Rule[]> };
  };
  const rules = (await config.default.headers?.()) ?? [];
  const everyPath = rules.filter((rule) => rule.source === "/:path*");
  if (everyPath.length !== rules.length)
    throw new Error("next.config.js has header rules for some paths only: the door knows none");
  return Object.fromEntries(everyPath.flatMap((rule) => rule.headers.map((h) => [h.key, h.value])));
}

const server = createFrontDoor({
  handle: (req, res) => handle(req, res),
  app: () => appSlot[APP_SLOT],
  parsePreferWait,
  // `npm run dev`: Next.js serves every route, so an edit is what the next request runs.
  ...(dev
    ? {}
    : { direct: { headers: await headersOfEveryAnswer(), port, ...(lab ? { lab } : {}) } }),
});
if (dev) {
  const upgrade = app.getUpgradeHandler();
  server.on("upgrade", (req, socket, head) => void upgrade(req, socket, head));
}
server.listen(port, hostname, () => {
  console.log(`   - Local: http://${hostname}:${port}`);
  console.log(` ✓ Ready in ${Math.round(performance.now() - started)}ms`);
});
// Stop accepting at once; the app's handler (src/server/start.ts) stops the jobs, flushes the
// counters and exits. Without one (no app made yet), exit here as Node would have.
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.on(signal, () => {
    server.close();
    if (process.listenerCount(signal) === 1) process.exit(signal === "SIGINT" ? 130 : 143);
  });
