// `npm run dev` / `npm start`: the app on its database, in one command.
// With no DATABASE_URL we start the embedded PostgreSQL (data in .data/pg, kept between runs),
// migrate and seed it, run Next.js, and stop PostgreSQL when Next.js exits or on Ctrl-C.
// With DATABASE_URL we use that server as it is (`npm run db:setup` migrates and seeds it).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { resolveDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../src/server/db/embedded";
import { setupDatabase } from "../src/server/db/setup";
import { ANNOUNCED_URL_FILE } from "../src/server/db/url";

const mode = process.argv[2];
if (mode !== "dev" && mode !== "start") {
  console.error("usage: tsx scripts/serve.ts dev|start");
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, "..");
const dataRoot = path.join(root, ".data");
mkdirSync(dataRoot, { recursive: true });

// Demo mode (one-click demo accounts, demo tokens): on for `npm run dev` unless DEMO_MODE says
// otherwise; `npm start` opens it only with DEMO_MODE=1. Set before the configuration is first
// read, and passed on to Next.js, so the seed and the server agree.
if (mode === "dev") process.env.DEMO_MODE ??= "1";
const demo = process.env.DEMO_MODE === "1" || process.env.DEMO_MODE === "true";
console.log(demo ? "[once] demo mode: demo accounts sign in with one click, demo tokens work" : "[once] demo mode off: sign in with an account made by `npm run users`");

// A signing key for session cookies that survives restarts, so signed-in browsers stay signed in.
if (!process.env.SESSION_SECRET) {
  const file = path.join(dataRoot, "session-secret");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600 });
  process.env.SESSION_SECRET = readFileSync(file, "utf8").trim();
}

let server: EmbeddedServer | undefined;
if (!process.env.DATABASE_URL) {
  const started = Date.now();
  const port = process.env.PGPORT ? Number(process.env.PGPORT) : undefined;
  server = await startEmbeddedPostgres({ dataDir: resolveDataDir(path.join(dataRoot, "pg")), port, persistent: true });
  await server.createDatabase("once");
  process.env.DATABASE_URL = server.url("once");
  await setupDatabase(process.env.DATABASE_URL, console.log, { demo });
  // So `npm run worker`, `npm run reconcile` and `npm run jobs` find this server while it runs.
  writeFileSync(ANNOUNCED_URL_FILE, process.env.DATABASE_URL, { mode: 0o600 });
  console.log(`[db] embedded PostgreSQL on port ${server.port} (${server.dataDir}), ready in ${Date.now() - started} ms`);
} else {
  console.log("[db] using DATABASE_URL (run `npm run db:setup` to migrate and seed it)");
}

const next = spawn(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), mode], {
  stdio: "inherit",
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
});

let stopping = false;
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (server) {
      rmSync(ANNOUNCED_URL_FILE, { force: true });
      await server.stop();
      console.log("[db] embedded PostgreSQL stopped");
    }
  }
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (next.exitCode === null && next.signalCode === null) next.kill(signal);
  });
}
next.on("exit", (code, signal) => void shutdown(code ?? (signal ? 0 : 1)));
