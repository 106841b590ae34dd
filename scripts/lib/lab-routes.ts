// The front door's lab module (ONCE_LAB_ROUTES): tRPC procedures that measure or try the app and
// must never be part of it (the benches' control, the checkout without the engine: lab/bench/http/
// control-route.ts). The door imports it at start-up and serves its procedures beside the app's
// (src/server/edge/front-door.ts). Only in demo mode, since a procedure from outside the app may
// skip what the app promises (idempotency): in production the variable stops the server with one
// sentence. The module must live in the project's lab/ folder, so the variable cannot be pointed
// at anything else by a slip.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError, loadLabRoutesConfig } from "../../src/server/config";
import type { LabRoutes } from "../../src/server/edge/front-door";

/**
 * The lab routes `env` asks for (a path relative to `root`, or absolute), or undefined when it asks
 * for none. Throws a ConfigError outside demo mode, for a module outside `root`/lab, or one that
 * exports no `labRoutes`.
 */
export async function loadLabRoutes(
  env: Record<string, string | undefined>,
  root: string,
): Promise<LabRoutes | undefined> {
  const named = loadLabRoutesConfig(env);
  if (named === undefined) return undefined;
  const file = path.resolve(root, named);
  const lab = path.join(root, "lab") + path.sep;
  if (!file.startsWith(lab))
    throw new ConfigError(`invalid configuration: ONCE_LAB_ROUTES must name a module in ${lab}`);
  const module = (await import(pathToFileURL(file).href)) as { labRoutes?: Partial<LabRoutes> };
  const routes = module.labRoutes;
  if (!Array.isArray(routes?.procedures) || typeof routes.handlerFor !== "function")
    throw new ConfigError(
      `invalid configuration: ONCE_LAB_ROUTES's module (${named}) exports no labRoutes ({ procedures, handlerFor })`,
    );
  return routes as LabRoutes;
}
