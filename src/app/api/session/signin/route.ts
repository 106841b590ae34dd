// Sign in (a form post from /signin): starts a session and sets its HttpOnly cookie. The rules are
// in src/server/auth/sign-in.ts; this file only wires the app's database and configuration in.
import { handleSignIn } from "@/server/auth/sign-in";
import { serverApp } from "@/server/app";
import { logger } from "@/server/logger";
import { storeFailureAnswer } from "@/http/store-failure";

export async function POST(req: Request) {
  try {
    const app = serverApp();
    return await handleSignIn(req, {
      db: app.db,
      demo: app.config.demo,
      trustedProxies: app.config.http.trustedProxies,
    });
  } catch (error) {
    // Sign-in only talks to the database (its input is checked before any query): what throws
    // here is the database being busy or away. Say which, without its insides (hosts, ports,
    // driver text), and log the details for the operator.
    logger.error({ err: error }, "sign-in failed");
    return storeFailureAnswer(error, {
      busy: "Sign-in is busy for a moment: try again",
      unavailable: "Sign-in is unavailable for a moment: try again",
    });
  }
}
