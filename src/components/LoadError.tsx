// Why a shop page cannot show what it loads, told apart as a visitor needs it: the shop cannot
// reach its database (the page comes back by itself), no such thing in this account, not signed
// in as a shop account, or another failure (reload in a moment).
import Link from "next/link";
import type { ReactNode } from "react";
import { isStoreUnreachable } from "@/trpc/store-status";

function httpStatus(error: unknown): unknown {
  return (error as { data?: { httpStatus?: unknown } | null } | null)?.data?.httpStatus;
}

interface LoadErrorProps {
  error: unknown;
  /** What failed to load, as it starts a sentence: "The catalog". */
  subject: string;
  /** What the page cannot do while the database is out of reach. */
  consequence: string;
  /** On a 401 or 403: the page to come back to after signing in, and what for ("see it"). */
  signIn?: { next: string; to: string };
  /** What a 404 says. */
  notFound?: ReactNode;
}

export function LoadError({ error, subject, consequence, signIn, notFound }: LoadErrorProps) {
  if (isStoreUnreachable(error)) return <StoreUnavailable consequence={consequence} />;
  const status = httpStatus(error);
  if (notFound && status === 404) return notFound;
  if (signIn && (status === 401 || status === 403)) {
    return (
      <p className="alert warn">
        <Link href={`/signin?next=${signIn.next}`}>Sign in as a shop account</Link> to {signIn.to}.
      </p>
    );
  }
  return (
    <p role="alert" className="alert bad">
      {subject} could not be loaded. Reload the page in a moment.
    </p>
  );
}

/**
 * A page's query while it has nothing to show: "Loading…", or why it failed. What a failure costs
 * depends on whether data from before is still on screen (`stale`) or none is (`missing`).
 */
export function LoadingOrError({
  query,
  stale,
  missing,
  ...explained
}: Omit<LoadErrorProps, "error" | "consequence"> & {
  query: { isPending: boolean; isError: boolean; error: unknown; data?: unknown };
  stale: string;
  missing: string;
}) {
  if (query.isPending) return <p className="muted">Loading…</p>;
  if (!query.isError) return null;
  const consequence = query.data ? stale : missing;
  return <LoadError error={query.error} consequence={consequence} {...explained} />;
}

/**
 * The one message every shop page shows while the shop cannot reach its database. It claims
 * nothing it does not know (no "product no longer sold", no "sign in": the data is just out of
 * reach) and says the page comes back by itself: failed queries poll until the database answers
 * again (src/trpc/store-status.ts). `consequence`: what this page cannot do meanwhile, e.g.
 * "Orders cannot be placed until then."
 */
export function StoreUnavailable({ consequence }: { consequence?: string }) {
  return (
    <div role="alert" className="alert warn">
      <strong>The shop cannot reach its database right now.</strong>{" "}
      {consequence ? `${consequence} ` : ""}Your cart is kept, and this page updates by itself as
      soon as the database is back.
    </div>
  );
}
