// Next.js calls register() once when a server process starts (src/server/start.ts says what it
// does). Next.js also compiles this file for its Edge runtime, which this app does not use.
// `process.env.NEXT_RUNTIME` is not a configuration read: Next.js replaces it with a constant when
// it compiles each runtime's copy, so the Edge copy drops the Node-only server entirely. It is the
// one `process.env` outside src/server/config.ts (eslint.config.js allows exactly this one).
export async function register() {
  // eslint-disable-next-line no-restricted-properties -- Next.js's build-time constant, see above
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerProcess } = await import("./server/start");
  startServerProcess();
}
