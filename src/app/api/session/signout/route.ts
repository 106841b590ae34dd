// Sign out: ends the session on the server and clears the cookie (src/server/auth/sign-out.ts);
// this file only wires the app's database in.
import { handleSignOut } from "@/server/auth/sign-out";
import { serverApp } from "@/server/app";
import { storeFailureAnswer } from "@/http/store-failure";
import { logger } from "@/server/logger";

export async function POST(req: Request) {
  try {
    const app = serverApp();
    return await handleSignOut(req, { db: app.db, trustedProxies: app.config.http.trustedProxies });
  } catch (error) {
    logger.error({ err: error }, "sign-out failed");
    const message =
      "Sign-out could not reach the database, so the session is still open: try again";
    return storeFailureAnswer(error, { busy: message, unavailable: message });
  }
}
