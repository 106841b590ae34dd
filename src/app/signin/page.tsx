// Sign in: e-mail and password, and in demo mode also one click per demo account. Each is a plain
// form that posts to /api/session/signin, which sets the HttpOnly session cookie and redirects to
// `next` (only ever a path on this site: src/http/safe-next.ts).
import { serverApp } from "@/server/app";
import { safeNextPath } from "@/http/safe-next";

const DEMO_ACCOUNTS = [
  { email: "acme@example.com", name: "Acme buyer", what: "Shops for the tenant acme." },
  { email: "globex@example.com", name: "Globex buyer", what: "Shops for the tenant globex." },
  {
    email: "admin@example.com",
    name: "Operator",
    what: "Sees the admin dashboard (keys, outbox, counters).",
  },
] as const;

/** What the sign-in route's `?error=` reasons mean to a person. */
const PROBLEMS: Record<string, string> = {
  invalid_credentials: "Wrong e-mail address or password.",
  too_many_attempts:
    "Too many attempts for this account or from this address: wait a few minutes and try again.",
  password_required: "Enter your e-mail address and password.",
  not_a_demo_account: "Pick one of the demo accounts.",
  invalid_form: "Enter your e-mail address and password.",
};

type SearchParams = Record<string, string | string[] | undefined>;
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<SearchParams>;
}) {
  const params = await searchParams;
  const next = safeNextPath(first(params.next));
  const problem = PROBLEMS[first(params.error) ?? ""];
  const demo = serverApp().config.demo;
  return (
    <>
      <h1>Sign in</h1>
      {problem && (
        <p role="alert" className="alert bad">
          {problem}
        </p>
      )}
      {demo && <DemoAccounts next={next} />}
      <PasswordForm next={next} demo={demo} />
    </>
  );
}

function DemoAccounts({ next }: { next: string }) {
  return (
    <>
      <p className="muted">This is a demo: pick an account, no password needed.</p>
      <ul className="grid bare" aria-label="Demo accounts">
        {DEMO_ACCOUNTS.map((account) => (
          <li key={account.email} className="card">
            <h2 style={{ marginBottom: "0.25rem" }}>{account.name}</h2>
            <p className="muted" style={{ margin: "0 0 0.25rem" }}>
              {account.email}
            </p>
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

function PasswordForm({ next, demo }: { next: string; demo: boolean }) {
  return (
    <form
      method="post"
      action="/api/session/signin"
      className="card"
      style={{ maxWidth: "24rem" }}
      aria-label="Sign in with a password"
    >
      {demo && <h2>Or with an account and password</h2>}
      <p>
        <label>
          E-mail address
          <br />
          <input type="email" name="email" autoComplete="username" required />
        </label>
      </p>
      <p>
        <label>
          Password
          <br />
          <input type="password" name="password" autoComplete="current-password" required />
        </label>
      </p>
      <input type="hidden" name="next" value={next} />
      <button type="submit">Sign in</button>
    </form>
  );
}
