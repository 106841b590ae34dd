"use client";
// What the dashboard's paged lists (keys, audit log, outbox) share: filters whose change starts
// again from the first page, and a query kept live while the page is open.
import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { REFRESH_MS, useCursorStack } from "./ui";

/** Refetched every couple of seconds; the rows on screen stay while another page loads. */
export const LIVE_LIST = { refetchInterval: REFRESH_MS, placeholderData: keepPreviousData };

type Given<F> = { [K in keyof F]?: Exclude<F[K], "" | false | undefined> };

/** The filters an operator gave: text trimmed; empty text, unticked boxes and absent ones left out. */
export function given<F extends Record<string, string | boolean | undefined>>(filters: F) {
  const out: Record<string, string | boolean> = {};
  for (const [name, value] of Object.entries(filters)) {
    const v = typeof value === "string" ? value.trim() : value;
    if (v) out[name] = v;
  }
  return out as Given<F>;
}

/**
 * A paged list's filters and pages. A change of filter starts again from the newest row; `input`
 * is what the list procedure takes (the filters given, and the page).
 */
export function useListFilters<F extends Record<string, string | boolean>>(initial: F) {
  const [filters, setFilters] = useState(initial);
  const pages = useCursorStack();
  const set =
    <K extends keyof F>(name: K) =>
    (value: F[K]) => {
      setFilters((f) => ({ ...f, [name]: value }));
      pages.reset();
    };
  /** A field bound to one filter: `<TextField label="Tenant" {...field("tenant")} />`. */
  const field = <K extends keyof F>(name: K) => ({ value: filters[name], onChange: set(name) });
  return { filters, field, pages, input: { ...given(filters), ...pages.input } };
}
