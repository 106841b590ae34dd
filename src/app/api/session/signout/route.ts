// Sign out: ends the session on the server and clears the cookie (src/server/auth/sign-out.ts);
// this file only wires the app's database in.
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import { handleSignOut } from "@/server/auth/sign-out";
import { serverApp } from "@/server/app";
import { plainError } from "@/server/http/plain-error";
import { logger } from "@/server/logger";
import { Reason } from "@/shared/reasons";

export async function POST(req: Request) {
  try {
    const app = serverApp();
    return await handleSignOut(req, { db: app.db, trustedProxies: app.config.http.trustedProxies });
  } catch (error) {
    logger.error({ err: error }, "sign-out failed");
    const busy = classifyStoreFailure(error) === StoreFailure.BUSY;
    return plainError(
      503,
      busy ? Reason.STORE_BUSY : Reason.STORE_UNAVAILABLE,
      "Sign-out could not reach the database, so the session is still open: try again",
      {
        "Retry-After": "1",
      },
    );
  }
}
