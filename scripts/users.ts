// `npm run users -- <command> [options]`: make operators, tenant users and API tokens (`--help`
// lists the commands: src/server/auth/users-cli.ts). Every failure is one sentence on stderr and a
// non-zero exit: 2 for a wrong command line, 1 for a refusal or an unreachable database.
import { loadDatabaseConfig } from "../src/server/config";
import { createDb } from "../src/server/db/client";
import { resolveDatabaseUrl } from "../tools/db/url";
import { readPassword } from "../src/server/auth/read-password";
import {
  AccountError,
  asksForHelp,
  needsPassword,
  parseCommand,
  runCommand,
  UsageError,
  USAGE,
} from "../src/server/auth/users-cli";
import { configOrExit } from "./lib/config";

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

const argv = process.argv.slice(2);
if (asksForHelp(argv)) {
  console.log(USAGE);
  process.exit(0);
}

let command;
try {
  command = parseCommand(argv);
} catch (error) {
  if (error instanceof UsageError) fail(`${error.message}\n\n${USAGE}`, 2);
  throw error;
}

// Only the database's variables (DATABASE_URL, or the running app's embedded database).
configOrExit("users", () => loadDatabaseConfig(process.env));
const db = createDb(resolveDatabaseUrl(), { max: 1 });
try {
  await db.$queryRaw`SELECT 1`.catch(() =>
    fail(
      "Cannot reach the database (DATABASE_URL, or the embedded one of a running `npm run dev`): start it and try again.",
      1,
    ),
  );
  const output = await runCommand(db, command, async () => {
    if (!needsPassword(command)) return "";
    return readPassword().catch((error: unknown) => fail((error as Error).message, 1)); // "The two passwords differ."
  });
  console.log(output.out);
  if (output.note) console.error(output.note);
} catch (error) {
  if (error instanceof AccountError) fail(error.message, 1);
  const code = (error as { code?: string }).code;
  if (code === "P2021" || code === "P2022")
    fail("The database is not set up: run `npm run db:setup` (or start the app once) first.", 1);
  fail(`Failed: ${(error as Error).message.split("\n")[0]}`, 1);
} finally {
  await db.$disconnect();
}
