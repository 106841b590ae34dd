// The counter chart's arithmetic, apart from its markup (tested in chart-buckets.test.ts).

/**
 * Sums consecutive points into buckets of `size` (the last bucket may be shorter): 1 440 minutes
 * drawn as 96 quarter-hours stay lines at any volume, where 1 440 points on 700 pixels became
 * a solid band.
 */
export function bucketed(points: readonly number[], size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < points.length; i += size) {
    let sum = 0;
    for (let j = i; j < Math.min(i + size, points.length); j++) sum += points[j] ?? 0;
    out.push(sum);
  }
  return out;
}

export interface ChartPair {
  tenant: string;
  procedure: string;
  /** Everything counted for the pair: orders tenants and procedures by volume. */
  volume: number;
}

export interface ChartChoice {
  value: string;
  label: string;
  input: { tenant: string; procedure?: string };
}

/**
 * The picker: every tenant with data, busiest first, each with "every procedure" and its `topN`
 * busiest procedures (a tenant's other procedures are in its "every procedure" line), so the list
 * stays short whatever the number of procedures.
 */
export function chartChoices(pairs: readonly ChartPair[], topN = 5): ChartChoice[] {
  const byTenant = new Map<string, ChartPair[]>();
  for (const p of pairs) byTenant.set(p.tenant, [...(byTenant.get(p.tenant) ?? []), p]);
  const volume = (list: ChartPair[]) => list.reduce((sum, p) => sum + p.volume, 0);
  const tenants = [...byTenant.entries()].sort(
    (a, b) => volume(b[1]) - volume(a[1]) || a[0].localeCompare(b[0]),
  );
  return tenants.flatMap(([tenant, list]) => {
    const top = [...list]
      .sort((a, b) => b.volume - a.volume || a.procedure.localeCompare(b.procedure))
      .slice(0, topN);
    const rest = list.length - top.length;
    return [
      {
        value: `${tenant}\u0000`,
        label: `${tenant} · every procedure${rest > 0 ? ` (${list.length})` : ""}`,
        input: { tenant },
      },
      ...top.map((p) => ({
        value: `${tenant}\u0000${p.procedure}`,
        label: `${tenant} · ${p.procedure}`,
        input: { tenant, procedure: p.procedure },
      })),
    ];
  });
}
