// Which address `npm run dev` / `npm start` listen on. `next dev` alone listens on every
// interface, and in demo mode that hands the network the one-click operator sign-in and the
// published `admin_demo_token`. So: loopback unless HOST says otherwise, and demo mode on an
// address other machines can reach only when DEMO_ALLOW_REMOTE=1 says it is meant.

export interface ListenSettings {
  mode: "dev" | "start";
  /** HOST, when set. */
  host: string | undefined;
  demo: boolean;
  /** DEMO_ALLOW_REMOTE=1: the demo doors may face the network (a shared demo machine). */
  allowRemoteDemo: boolean;
}

export type ListenDecision =
  { ok: true; host: string; announcement: string } | { ok: false; refusal: string };

/**
 * `npm start` without demo mode is a production server, which serves its network (behind a proxy
 * or not) as `next start` always has; everything else starts on loopback.
 */
function defaultHost(mode: ListenSettings["mode"], demo: boolean): string {
  return mode === "start" && !demo ? "0.0.0.0" : "127.0.0.1";
}

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    bare === "localhost" ||
    bare === "::1" ||
    /^127(\.\d{1,3}){3}$/.test(bare) ||
    bare === "::ffff:127.0.0.1"
  );
}

export function decideListenAddress(settings: ListenSettings): ListenDecision {
  const host = settings.host?.trim() || defaultHost(settings.mode, settings.demo);
  const local = isLoopback(host);
  if (settings.demo && !local && !settings.allowRemoteDemo) {
    return {
      ok: false,
      refusal: `Demo mode opens the demo accounts and tokens to whoever reaches ${host}: listen on 127.0.0.1 (unset HOST), turn demo mode off (DEMO_MODE=0), or set DEMO_ALLOW_REMOTE=1 if every machine that can reach it may sign in as the operator.`,
    };
  }
  const reach = local
    ? "this machine only; set HOST=0.0.0.0 to serve the network"
    : "reachable from the network";
  return { ok: true, host, announcement: `[once] listening on ${host} (${reach})` };
}
