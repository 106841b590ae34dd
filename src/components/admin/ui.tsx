// Small shared pieces of the admin dashboard.
"use client";
import { useState, type ReactNode } from "react";
import { leaseText } from "@/shared/lease-text";

/** How often the dashboard refetches while open: keys and counters change under the operator. */
export const REFRESH_MS = 2_000;

export function formatTime(value: string | null): string {
  if (!value) return "–";
  return new Date(value).toLocaleString("en-GB", { dateStyle: "short", timeStyle: "medium" });
}

const STATUS_TONE: Record<string, "ok" | "warn" | "bad"> = {
  COMPLETED: "ok",
  DELIVERED: "ok",
  FAILED: "bad",
  DEAD: "bad",
  PROCESSING: "warn",
  PENDING: "warn",
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${STATUS_TONE[status] ?? ""}`}>{status}</span>;
}

const LEASE_TONE = { live: "warn", expired: "bad", none: "" } as const;

export function LeaseBadge({
  state,
  remainingMs = null,
}: {
  state: "live" | "expired" | "none";
  remainingMs?: number | null;
}) {
  return <span className={`badge ${LEASE_TONE[state]}`}>{leaseText(state, remainingMs)}</span>;
}

/** The message of a failed query or mutation, with its reason when the server gave one. */
export function errorText(error: unknown): string {
  const e = error as { message?: string; data?: { reason?: string } | null } | null;
  const reason = e?.data?.reason ? ` (${e.data.reason})` : "";
  return `${e?.message ?? "Something went wrong"}${reason}`;
}

export function QueryState({
  isPending,
  error,
  children,
}: {
  isPending: boolean;
  error: unknown;
  children: ReactNode;
}) {
  if (error)
    return (
      <div role="alert" className="alert bad">
        Could not load: {errorText(error)}
      </div>
    );
  if (isPending) return <p className="muted">Loading…</p>;
  return <>{children}</>;
}

/** Rows per page of every paged admin list. */
const PAGE_SIZE = 50;

/**
 * Keyset paging: a stack of the cursors that led to the current page. `input` is the page for a
 * list procedure: its size, and the cursor past the first page.
 */
export function useCursorStack() {
  const [stack, setStack] = useState<string[]>([]);
  const cursor = stack[stack.length - 1];
  return {
    cursor,
    input: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) },
    page: stack.length,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => s.slice(0, -1)),
    reset: () => setStack([]),
  };
}

export function Pager({
  pages,
  nextCursor,
  label,
}: {
  pages: ReturnType<typeof useCursorStack>;
  nextCursor: string | null | undefined;
  label: string;
}) {
  const button = (text: string, onClick: () => void, disabled: boolean) => (
    <button type="button" className="secondary" onClick={onClick} disabled={disabled}>
      {text}
    </button>
  );
  return (
    <nav className="row" style={{ marginTop: "0.5rem" }} aria-label={`${label} pages`}>
      {button("First page", pages.reset, pages.page === 0)}
      {button("Previous page", pages.previous, pages.page === 0)}
      <span className="muted">Page {pages.page + 1}</span>
      {button("Next page", () => nextCursor && pages.next(nextCursor), !nextCursor)}
    </nav>
  );
}
