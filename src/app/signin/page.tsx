// Sign in as one of the demo accounts: each is a plain form that posts to /api/session/signin,
// which sets the HttpOnly session cookie and redirects back to where the person came from.
const ACCOUNTS = [
  { email: "acme@example.com", name: "Acme buyer", what: "Shops for the tenant acme." },
  { email: "globex@example.com", name: "Globex buyer", what: "Shops for the tenant globex." },
  { email: "admin@example.com", name: "Operator", what: "Sees the admin dashboard (keys, outbox, counters)." },
] as const;

/** Only a path on this site (`/cart`, never `//evil.example` or a full URL). */
function safeNext(value: string | string[] | undefined): string {
  const next = Array.isArray(value) ? value[0] : value;
  return next && /^\/(?!\/)/.test(next) ? next : "/";
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNext((await searchParams).next);
  return (
    <>
      <h1>Sign in</h1>
      <p className="muted">This is a demo: pick an account, no password needed.</p>
      <ul className="grid" aria-label="Demo accounts" style={{ listStyle: "none", padding: 0 }}>
        {ACCOUNTS.map((account) => (
          <li key={account.email} className="card">
            <h2 style={{ fontSize: "1.05rem", margin: "0 0 0.25rem" }}>{account.name}</h2>
            <p className="muted" style={{ margin: "0 0 0.25rem" }}>{account.email}</p>
            <p style={{ marginTop: 0 }}>{account.what}</p>
            <form method="post" action="/api/session/signin">
              <input type="hidden" name="email" value={account.email} />
              <input type="hidden" name="next" value={next} />
              <button type="submit">Sign in as {account.name}</button>
            </form>
          </li>
        ))}
      </ul>
    </>
  );
}
