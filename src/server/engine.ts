// The app's one engine per process, on the app's database.
import { getDb } from "./db/client";
import { createEngine, type Engine } from "./idempotency";

const globalForEngine = globalThis as unknown as { onceEngine?: Engine };

export function getEngine(): Engine {
  return (globalForEngine.onceEngine ??= createEngine(getDb()));
}
