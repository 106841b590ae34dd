// Next.js calls register() once when a server instance starts: we start the background jobs there
// (unless ONCE_BACKGROUND_JOBS=0, e.g. for an instance that should only serve requests).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Before any request: the sign-in throttle needs the socket's address (peer-address.ts).
  const { installPeerAddressHeader } = await import("./server/http/peer-address");
  installPeerAddressHeader();
  const { checkConfiguration, startBackgroundJobsUntilExit } = await import("./server/jobs");
  checkConfiguration();
  if (process.env.ONCE_BACKGROUND_JOBS === "0" || !process.env.DATABASE_URL) return;
  const { getDb } = await import("./server/db/client");
  startBackgroundJobsUntilExit(getDb());
}
