// The payment provider's webhook: one event per charge, possibly delivered more than once; every
// delivery of an event gets the same answer (src/payments/webhook.ts). The handler is the
// one the front door calls straight from the socket under `npm start`
// (src/server/edge/api-routes.ts); this file is how Next.js serves it (`next dev`).
import { serverApp } from "@/server/app";

export const dynamic = "force-dynamic";

export function POST(request: Request) {
  return serverApp().routes!.webhook(request);
}
