// The payment provider's webhook: one event per charge, possibly delivered more than once; every
// delivery of an event gets the same answer (src/server/payments/webhook.ts).
import { serverApp } from "@/server/app";
import { webhookResponse } from "@/server/payments/webhook";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  const app = serverApp();
  return webhookResponse(app.payments, request, { secret: app.config.payments.webhookSecret });
}
