// /admin: the operator's dashboard. Gated on the server: a tenant or a signed-out visitor gets a
// clear "not allowed" and the dashboard's components are never rendered, so no admin query runs
// (the API refuses them anyway: 401/403).
import Link from "next/link";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { serverApp } from "@/server/app";
import { principalFromHeaders } from "@/server/auth/principal";

export const dynamic = "force-dynamic";

export default async function AdminLayout({ children }: { children: ReactNode }) {
  let principal;
  try {
    const app = serverApp();
    principal = await principalFromHeaders(app.db, new Headers(await headers()), {
      demo: app.config.demo,
    });
  } catch {
    return (
      <div role="alert" className="alert bad">
        The database cannot be reached, so the dashboard cannot check who you are. Try again in a
        moment.
      </div>
    );
  }
  if (!principal || principal.role !== "ADMIN") return <NotAllowed principal={principal} />;
  return (
    <div className="admin">
      <nav aria-label="Admin" className="row" style={{ marginBottom: "1rem" }}>
        <strong>Admin</strong>
        <Link href="/admin">Keys &amp; counters</Link>
        <Link href="/admin/outbox">Outbox &amp; reconciliation</Link>
        <Link href="/admin/audit">Audit log</Link>
        <Link href="/admin/sessions">Sessions</Link>
      </nav>
      {children}
    </div>
  );
}

/** A signed-out visitor or a tenant at /admin: what the dashboard is for, and a way to sign in. */
function NotAllowed({ principal }: { principal: { name: string } | null }) {
  return (
    <section aria-labelledby="not-allowed">
      <h1 id="not-allowed">Admin dashboard</h1>
      <div role="alert" className="alert bad">
        <strong>Not allowed.</strong>{" "}
        {principal
          ? `You are signed in as ${principal.name}: the dashboard is for the operator account only.`
          : "Sign in with the operator account to see the dashboard."}{" "}
        <Link href="/signin?next=/admin">Sign in as another account</Link>
      </div>
    </section>
  );
}
