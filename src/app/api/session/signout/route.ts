import { clearSessionCookieHeader } from "@/server/auth/session";

export async function POST() {
  return new Response(null, { status: 303, headers: { Location: "/signin", "Set-Cookie": clearSessionCookieHeader() } });
}
