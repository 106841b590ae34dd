// A command's configuration, or the one sentence that says which variable is wrong and a non-zero
// exit: never a ConfigError's stack trace. Each command loads only the sections it reads
// (src/server/config.ts), so nothing it does not use can stop it.
import { ConfigError } from "../../src/server/config";

export function configOrExit<T>(command: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`[${command}] cannot start: ${error.message}`);
    process.exit(1);
  }
}
