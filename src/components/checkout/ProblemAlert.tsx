import Link from "next/link";
import type { describeCheckoutProblem } from "../checkout-problems";

/** Why the checkout did not go through, and what to do next (wording: checkout-problems.ts). */
export function ProblemAlert({
  id,
  problem,
}: {
  id: string;
  problem: ReturnType<typeof describeCheckoutProblem>;
}) {
  return (
    <div role="alert" id={id} className="alert bad">
      <strong>{problem.title}.</strong> {problem.detail}
      {problem.serverMessage && (
        <p className="muted" style={{ marginBottom: 0 }}>
          The shop said: {problem.serverMessage}
        </p>
      )}
      {problem.replayed && (
        <p className="muted" style={{ marginBottom: 0 }}>
          This is the answer the shop gave the first time this cart was sent (replayed).
        </p>
      )}
      {problem.signIn && (
        <p style={{ marginBottom: 0 }}>
          <Link href="/signin?next=/cart">Sign in</Link>
        </p>
      )}
    </div>
  );
}
