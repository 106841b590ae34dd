// The error answer of the plain (non-tRPC) routes: sign-in, sign-out, the webhook, body limits.
// Like tRPC's errors it names its reason and where that reason is explained, in the body and as a
// `Link: <…>; rel="describedby"` header (the IETF Idempotency-Key draft's advice).
import { describedByLink, reasonDocsPath, type Reason } from "@/shared/reasons";

export interface PlainErrorBody {
  error: string;
  reason: Reason;
  docs: string;
}

export function plainError(
  status: number,
  reason: Reason,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const docs = reasonDocsPath(reason);
  const body: PlainErrorBody = { error: message, reason, docs };
  return Response.json(body, { status, headers: { ...headers, Link: describedByLink(reason) } });
}
