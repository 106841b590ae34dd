// POST /api/session/signin: the browser's only way to get a session cookie. In order: refuse a
// cross-site post (login CSRF), anything but a form (415) and a body over 64 KiB (413), then a demo
// account's one-click sign-in (demo mode only) or e-mail + password, checked with scrypt after
// taking an attempt from the throttle (throttle.ts). `next` becomes a path on this site.
import { setTimeout as wait } from "node:timers/promises";
import { describedByLink, type Reason } from "@/shared/reasons";
import type { Db } from "../db/client";
import { clientAddress } from "../../http/client-address";
import { crossSiteRefusal, isCrossSiteRequest } from "../../http/cross-site";
import { safeNextPath } from "../../http/safe-next";
import { verifyAgainstDecoy, verifyPassword } from "./password";
import { createSession, sessionCookieHeader } from "./session";
import { readSignInForm, type SignInForm } from "./sign-in-form";
import {
  DEFAULT_LIMITS,
  forgetStaleAttempts,
  giveBackAttempt,
  recordFailure,
  takeAttempt,
  throttleKeys,
  type ThrottleLimits,
} from "./throttle";
import { plainError } from "../../http/plain-error";

export interface SignInDeps {
  db: Db;
  /** DEMO_MODE, parsed at start-up: demo accounts sign in with one click, and only then. */
  demo: boolean;
  limits?: ThrottleLimits;
  /** TRUSTED_PROXIES: how many proxies' X-Forwarded-For entries name the client (0: none). */
  trustedProxies?: number;
  /** Waits out the throttle's slow-down (tests pass a recorder). */
  sleep?: (ms: number) => Promise<void>;
}

type Refusal = { status: number; reason: Reason; message: string; retryAfterSeconds?: number };
type Outcome =
  { ok: true; user: { id: string; role: "TENANT" | "ADMIN" } } | ({ ok: false } & Refusal);
const refused = (status: number, reason: Reason, message: string, retryAfterSeconds?: number) =>
  ({ ok: false, status, reason, message, retryAfterSeconds }) as const;

const userSelect = { id: true, role: true, demo: true, passwordHash: true } as const;

async function demoSignIn(deps: SignInDeps, form: SignInForm): Promise<Outcome> {
  if (!deps.demo)
    return refused(400, "password_required", "Enter your e-mail address and password");
  const user = await deps.db.user.findUnique({ where: { email: form.email }, select: userSelect });
  // One click opens demo accounts only, never a real one that happens to be in the database.
  if (!user?.demo) return refused(400, "not_a_demo_account", "Pick one of the demo accounts");
  return { ok: true, user };
}

async function passwordSignIn(
  deps: SignInDeps,
  form: SignInForm & { password: string },
  address: string,
): Promise<Outcome> {
  const keys = throttleKeys(form.email, address);
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const attempt = await takeAttempt(deps.db, keys, limits);
  if (!attempt.allowed) {
    const message = "Too many sign-in attempts from here: wait a little and try again";
    return refused(429, "too_many_attempts", message, attempt.retryAfterSeconds);
  }
  if (attempt.delayMs > 0) await (deps.sleep ?? wait)(attempt.delayMs);
  const user = await deps.db.user.findUnique({ where: { email: form.email }, select: userSelect });
  // Demo accounts have no password; outside demo mode they do not exist for anybody.
  const usable = user?.passwordHash && (deps.demo || !user.demo) ? user : null;
  const valid = usable
    ? await verifyPassword(form.password, usable.passwordHash!)
    : await verifyAgainstDecoy(form.password);
  if (!usable || !valid) {
    await recordFailure(deps.db, keys, limits);
    await forgetStaleAttempts(deps.db, limits);
    return refused(401, "invalid_credentials", "Wrong e-mail address or password");
  }
  await giveBackAttempt(deps.db, keys);
  return { ok: true, user: usable };
}

/** Refusals our own form never earns (another site's post, another media type, a huge body). */
const NOT_FROM_OUR_FORM = new Set([403, 413, 415]);

/** A person's browser (a form post) goes back to the form with the reason; others get JSON. */
const isNavigation = ({ headers }: Request) =>
  headers.get("sec-fetch-mode") === "navigate" || !!headers.get("accept")?.includes("text/html");

function refuse(req: Request, refusal: Refusal, next: string): Response {
  const headers: Record<string, string> = refusal.retryAfterSeconds
    ? { "Retry-After": String(refusal.retryAfterSeconds) }
    : {};
  if (isNavigation(req) && !NOT_FROM_OUR_FORM.has(refusal.status)) {
    const query = new URLSearchParams({ error: refusal.reason, ...(next !== "/" ? { next } : {}) });
    return new Response(null, {
      status: 303,
      headers: { ...headers, Link: describedByLink(refusal.reason), Location: `/signin?${query}` },
    });
  }
  return plainError(refusal.status, refusal.reason, refusal.message, headers);
}

export async function handleSignIn(req: Request, deps: SignInDeps): Promise<Response> {
  if (isCrossSiteRequest(req.headers, req.url, deps.trustedProxies ?? 0)) return crossSiteRefusal();
  const read = await readSignInForm(req);
  if (!read.ok) return refuse(req, read, "/");
  const { form } = read;
  const next = safeNextPath(form.next, new URL(req.url).origin);
  const { password } = form;
  const address = clientAddress(req.headers, deps.trustedProxies ?? 0);
  const outcome =
    password === undefined
      ? await demoSignIn(deps, form)
      : await passwordSignIn(deps, { ...form, password }, address);
  if (!outcome.ok) return refuse(req, outcome, next);
  const target = next === "/" && outcome.user.role === "ADMIN" ? "/admin" : next;
  // Secure over HTTPS, also when a TLS-terminating proxy forwards plain HTTP and says so.
  const secure =
    new URL(req.url).protocol === "https:" ||
    req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
  const session = await createSession(deps.db, outcome.user, req.headers.get("user-agent"));
  return new Response(null, {
    status: 303,
    headers: { Location: target, "Set-Cookie": sessionCookieHeader(session, secure) },
  });
}
