import { serverApp } from "@/server/app";
import { serveTrpc } from "@/server/api/handler";

// The doors (cross-site posts, body size) and tRPC itself: src/server/api/handler.ts.
const handler = (req: Request) => serveTrpc(req, serverApp());

export { handler as GET, handler as POST };
