// `npm run db -- stop|start|status`: the outage switch for the demo. It acts on this project's
// embedded PostgreSQL only (the one `npm run dev` / `npm start` runs, outside the project:
// tools/db/url.ts), found by its own pid file, never by name, so every other PostgreSQL on the
// machine is left alone.
//
//   stop     fast shutdown (SIGINT): open connections fail at once, as in a real outage
//   start    asks the running app to start it again on the same port; the app recovers by itself
//   status   running or not, with pid and port
import { resolveDataDir } from "../tools/db/embedded";
import { findPostmaster, stopPostmaster } from "../tools/db/postmaster";
import { isProcessAlive, waitFor } from "../tools/process";
import { embeddedDataDir, readAppState } from "../tools/db/url";

const command = process.argv[2];
if (command !== "stop" && command !== "start" && command !== "status") {
  console.error("usage: npm run db -- stop|start|status");
  process.exit(2);
}
if (process.env.DATABASE_URL) {
  console.error(
    "DATABASE_URL is set: this switch acts only on the embedded PostgreSQL that `npm run dev` starts; stop and start your own server with its own tools.",
  );
  process.exit(2);
}

const dataDir = resolveDataDir(embeddedDataDir(), () => {});
const app = readAppState();
const appRunning = app !== null && isProcessAlive(app.pid);

const running = findPostmaster(dataDir);
switch (command) {
  case "status":
    console.log(
      running
        ? `PostgreSQL (embedded) is running: pid ${running.pid}, port ${running.port}, data in ${dataDir}.`
        : `PostgreSQL (embedded) is stopped${appRunning ? "; the app is running and answers 503 until `npm run db -- start`" : ""}.`,
    );
    break;
  case "stop":
    if (!running) {
      console.log("PostgreSQL (embedded) is not running: nothing to stop.");
      break;
    }
    await stopPostmaster(running);
    console.log(
      `PostgreSQL (pid ${running.pid}) stopped with a fast shutdown: open connections were closed. \`npm run db -- start\` brings it back.`,
    );
    break;
  case "start": {
    if (running) {
      console.log(
        `PostgreSQL (embedded) is already running: pid ${running.pid}, port ${running.port}.`,
      );
      break;
    }
    if (!app || !appRunning) {
      console.error(
        "The app is not running: `npm run dev` starts PostgreSQL together with the app.",
      );
      process.exit(1);
    }
    process.kill(app.pid, "SIGUSR2"); // scripts/serve.ts starts it again on the same folder and port
    await waitFor(
      "PostgreSQL to accept connections",
      () => findPostmaster(dataDir)?.ready === true,
    );
    console.log(`PostgreSQL is running again on port ${app.pgPort}: the app reconnects by itself.`);
    break;
  }
}
