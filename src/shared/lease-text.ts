// A key's lease as a sentence, judged by the database's clock when the row was read: "live, 25 s
// left", "expired 3 min ago (stuck)". Never "until <a past time>". The dashboard's table and
// detail and the key's timeline (written on the server) say it the same way.

/** "40 s", "3 min", "2 h 5 min": a duration an operator reads at a glance. */
export function formatDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
}

export function leaseText(state: "live" | "expired" | "none", remainingMs: number | null): string {
  if (state === "none" || remainingMs === null) return "none";
  return state === "live"
    ? `live, ${formatDuration(remainingMs)} left`
    : `expired ${formatDuration(remainingMs)} ago (stuck)`;
}
