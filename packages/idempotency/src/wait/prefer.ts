// `Prefer: wait=N` (RFC 7240 §4.3): the client will wait up to N seconds for the answer. The engine
// uses it for one thing only: a request whose key is in flight waits for the first request's
// answer instead of getting 409 at once.

/**
 * The `wait` preference in seconds, or undefined when absent or unreadable. Several `Prefer`
 * headers arrive joined by commas; RFC 7240 says to consider only the first instance of a
 * preference and to ignore what cannot be understood (so a bad value is no preference, not a 400).
 */
export function parsePreferWait(header: string | null | undefined): number | undefined {
  if (!header) return undefined;
  for (const preference of header.split(",")) {
    const [token] = preference.split(";"); // parameters after ";" do not apply to wait
    const [name, rawValue] = (token ?? "").split("=").map((part) => part.trim());
    if (name?.toLowerCase() !== "wait") continue;
    const value = rawValue?.replace(/^"(.*)"$/, "$1") ?? "";
    return /^\d{1,9}$/.test(value) ? Number(value) : undefined;
  }
  return undefined;
}

/** `Preference-Applied` for a wait the engine honoured. */
export function preferenceApplied(seconds: number): string {
  return `wait=${seconds}`;
}
