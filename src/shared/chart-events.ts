// The events the incident chart draws, by the engine's names (CounterEvent): what an operator
// watches when something goes wrong. One list for the series the server reads
// (src/server/admin/counter-series.ts) and the lines the browser draws
// (src/components/admin/CounterChart.tsx).
import { CounterEvent } from "@once/idempotency/reasons";

export const CHART_EVENTS = [
  CounterEvent.EXECUTED,
  CounterEvent.REPLAYED,
  CounterEvent.CONFLICTS,
  CounterEvent.MISMATCHES,
  CounterEvent.STORE_ERRORS,
] as const;
export type ChartEvent = (typeof CHART_EVENTS)[number];
