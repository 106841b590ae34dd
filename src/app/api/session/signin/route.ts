// Sign in as a demo account (a form post from /signin): sets the signed HttpOnly session cookie.
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { createSessionValue, sessionCookieHeader } from "@/server/auth/session";
import { DEMO_ACCOUNTS } from "@/server/db/seed";

const form = z.object({
  email: z.enum(DEMO_ACCOUNTS.map((a) => a.email) as [string, ...string[]]),
  next: z.string().regex(/^\/(?!\/)/).default("/"),
});

export async function POST(req: Request) {
  const data = Object.fromEntries(await req.formData());
  const parsed = form.safeParse(data);
  if (!parsed.success) return Response.json({ error: "Pick one of the demo accounts" }, { status: 400 });
  const user = await getDb().user.findUnique({ where: { email: parsed.data.email }, select: { id: true, role: true } });
  if (!user) return Response.json({ error: "Unknown account: run the seed" }, { status: 400 });
  const target = parsed.data.next === "/" && user.role === "ADMIN" ? "/admin" : parsed.data.next;
  const secure = new URL(req.url).protocol === "https:";
  return new Response(null, {
    status: 303,
    headers: { Location: target, "Set-Cookie": sessionCookieHeader(createSessionValue(user.id), secure) },
  });
}
