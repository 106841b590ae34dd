// This app has no sign-in, so the scope of idempotency keys is the browser: src/middleware.ts
// gives every browser an anonymous id in a cookie when it loads a page, before any mutation. Keys
// are unique per scope, so two browsers never see each other's answers, and the engine's live-key
// cap (maxLiveKeys) applies per browser, not to all visitors together as one fixed "public"
// scope would. An app with sign-in uses the user's id instead (ctx.session.user.id).
export const ANONYMOUS_ID_COOKIE = "anonymous-id";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The browser's anonymous id from the request's cookies, or null if it has none (or a forged one).
 */
export function anonymousIdOf(headers: Headers): string | null {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const [name, value] = part.trim().split("=");
    if (name === ANONYMOUS_ID_COOKIE && value && UUID.test(value)) return value;
  }
  return null;
}
