import { NextResponse, type NextRequest } from "next/server";

import { ANONYMOUS_ID_COOKIE } from "~/server/anonymous-id";

// Gives a browser its anonymous id (the scope of its idempotency keys: src/server/anonymous-id.ts)
// with the first page it loads, so every mutation it sends later carries it.
export function middleware(request: NextRequest) {
  const response = NextResponse.next();
  if (!request.cookies.has(ANONYMOUS_ID_COOKIE)) {
    response.cookies.set(ANONYMOUS_ID_COOKIE, crypto.randomUUID(), {
      httpOnly: true,
      sameSite: "lax",
      path: "/",
      maxAge: 60 * 60 * 24 * 365,
    });
  }
  return response;
}

// Pages only: the API reads the cookie, it never hands one out.
export const config = { matcher: ["/((?!api|_next|favicon.ico).*)"] };
