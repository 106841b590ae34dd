// A signing key for session cookies that survives restarts, so signed-in browsers stay signed in:
// SESSION_SECRET, or one generated once into .data/session-secret.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export function loadSessionSecret(dataRoot: string): void {
  if (process.env.SESSION_SECRET) return;
  const file = path.join(dataRoot, "session-secret");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600 });
  process.env.SESSION_SECRET = readFileSync(file, "utf8").trim();
}
