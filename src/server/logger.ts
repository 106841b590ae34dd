// The process's one logger. Kept in a global slot because a bundler may copy this module once per
// route: the level the composition root sets (LOG_LEVEL, src/server/app.ts) must reach every copy.
import pino from "pino";

const SLOT = Symbol.for("once.logger");
const slot = globalThis as unknown as Record<typeof SLOT, pino.Logger | undefined>;

export const logger: pino.Logger = (slot[SLOT] ??= pino({ level: "info" }));

/** Sets the level of the process's logger (every copy of this module shares it). */
export function setLogLevel(level: pino.LevelWithSilent): void {
  logger.level = level;
}
