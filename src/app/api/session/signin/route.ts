// Sign in (a form post from /signin): sets the signed HttpOnly session cookie. The rules are in
// src/server/auth/sign-in.ts; this file only wires the app's database and configuration in.
import { handleSignIn } from "@/server/auth/sign-in";
import { serverApp } from "@/server/app";
import { logger } from "@/server/logger";
import { plainError } from "@/server/http/plain-error";
import { Reason } from "@/shared/reasons";

export async function POST(req: Request) {
  try {
    const app = serverApp();
    return await handleSignIn(req, { db: app.db, demo: app.config.demo });
  } catch (error) {
    // Sign-in only talks to the database: what throws here is the database being away. Say so
    // without its insides (hosts, ports, driver text), and log the details for the operator.
    logger.error({ err: error }, "sign-in failed");
    return plainError(503, Reason.STORE_UNAVAILABLE, "Sign-in is unavailable for a moment: try again", { "Retry-After": "1" });
  }
}
