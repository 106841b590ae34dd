// `/api/trpc/*` as Next.js serves it (`next dev`, and `next start` without the front door): the
// very handler the front door calls straight from the socket under `npm start`
// (src/server/edge/api-routes.ts: the cross-site door, the body under its limit and deadline, the
// admission bound, then tRPC).
import { serverApp } from "@/server/app";

function handler(req: Request) {
  return serverApp().routes!.trpc(req);
}

export { handler as GET, handler as POST };
