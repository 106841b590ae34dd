// Reading the sign-in form: only what an HTML form sends (urlencoded or multipart), so a JSON
// body is a clear 415 instead of a parser's 500; at most SIGN_IN_BODY_LIMIT_BYTES of it, refused
// on its Content-Length or counted as it streams (413, src/http/body-limit.ts), before the
// form is parsed or the database asked anything; and every field is a string or absent, holding
// only text PostgreSQL can store (src/shared/text.ts): a NUL in the e-mail is a 400, not a 503
// from the query that would have failed.
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from "@/shared/text";
import {
  boundRequestBodyWithin,
  SIGN_IN_BODY_LIMIT_BYTES,
  tooLargeMessage,
} from "../../http/body-limit";

const FORM_MEDIA_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data"];

export interface SignInForm {
  email: string;
  /** Absent: a demo account's one-click button (demo mode only). */
  password: string | undefined;
  next: string | undefined;
}

type Refusal = {
  ok: false;
  status: 400 | 413 | 415;
  reason: "unsupported_media_type" | "payload_too_large" | "invalid_form" | "invalid_input";
  message: string;
};
type FormResult = { ok: true; form: SignInForm } | Refusal;

/** A field's text; files and repeated fields are not a sign-in. */
function text(data: FormData, name: string): string | undefined | null {
  const values = data.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1 || typeof values[0] !== "string") return null;
  return values[0];
}

const refuse = (status: Refusal["status"], reason: Refusal["reason"], message: string) =>
  ({ ok: false, status, reason, message }) satisfies Refusal;

export async function readSignInForm(req: Request): Promise<FormResult> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!FORM_MEDIA_TYPES.includes(type)) {
    const expected = `Content-Type must be ${FORM_MEDIA_TYPES.join(" or ")}`;
    return refuse(415, "unsupported_media_type", `Sign in with a form: ${expected}`);
  }
  const bounded = await boundRequestBodyWithin(req, SIGN_IN_BODY_LIMIT_BYTES);
  if (!bounded.ok)
    return refuse(413, "payload_too_large", tooLargeMessage(SIGN_IN_BODY_LIMIT_BYTES));
  let data: FormData;
  try {
    data = await bounded.request.formData();
  } catch {
    return refuse(400, "invalid_form", "The form could not be read");
  }
  return signInFormOf(data);
}

/** The sign-in's fields: an e-mail, and a password and a `next` if given, all storable text. */
function signInFormOf(data: FormData): FormResult {
  const email = text(data, "email");
  const password = text(data, "password");
  const next = text(data, "next");
  if (!email || email.length > 320 || password === null || next === null)
    return refuse(400, "invalid_form", "Give an e-mail address (and a password)");
  if (![email, password, next].every((field) => field === undefined || isStorableText(field)))
    return refuse(400, "invalid_input", UNSTORABLE_TEXT_MESSAGE);
  return { ok: true, form: { email: email.trim().toLowerCase(), password, next } };
}
