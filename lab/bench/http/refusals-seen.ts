// What an instance counted as refused, read from its /api/metrics (the bench runs in demo mode,
// where the admin's demo token exists): `once_http_refusals_total{reason,stage}`, so a bench can say
// where its 503s came from (the line's deadline, the queue full at once, the store) and not only
// how many it got.
const ADMIN_TOKEN = "admin_demo_token";

/** `reason/stage` → count, summed over the labels the metric carries besides them. */
export async function refusalsSeen(port: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/api/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (!res.ok) throw new Error(`/api/metrics on ${port} answered ${res.status}`);
  const counts = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("once_http_refusals_total{")) continue;
    const reason = /reason="([^"]*)"/.exec(line)?.[1] ?? "?";
    const stage = /stage="([^"]*)"/.exec(line)?.[1] ?? "?";
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    const key = `${reason}/${stage}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** What was counted between two readings, as `reason/stage×n, …` (or "none"). */
export function refusalsBetween(before: Map<string, number>, after: Map<string, number>): string {
  const grown = [...after]
    .map(([key, n]) => [key, n - (before.get(key) ?? 0)] as const)
    .filter(([, n]) => n > 0);
  return grown.map(([key, n]) => `${key}×${n}`).join(", ") || "none";
}
