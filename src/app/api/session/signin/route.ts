// Sign in (a form post from /signin): sets the signed HttpOnly session cookie. The rules are in
// src/server/auth/sign-in.ts; this file only wires the app's database and configuration in.
import { handleSignIn } from "@/server/auth/sign-in";
import { getDb } from "@/server/db/client";
import { demoMode } from "@/server/env";
import { logger } from "@/server/logger";

export async function POST(req: Request) {
  try {
    return await handleSignIn(req, { db: getDb(), demo: demoMode() });
  } catch (error) {
    // Sign-in only talks to the database: what throws here is the database being away. Say so
    // without its insides (hosts, ports, driver text), and log the details for the operator.
    logger.error({ err: error }, "sign-in failed");
    return Response.json(
      { error: "Sign-in is unavailable for a moment: try again", reason: "store_unavailable" },
      { status: 503, headers: { "Retry-After": "1" } },
    );
  }
}
