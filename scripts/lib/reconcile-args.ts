// `npm run reconcile` arguments: what to judge (the job's run, everything since a date, the whole
// history) or a finding to resolve. A bad argument is one sentence, never a stack trace.
import { parseArgs } from "node:util";

export type ReconcileCommand =
  | { kind: "run" }
  | { kind: "since"; since: Date }
  | { kind: "all" }
  | { kind: "resolve"; id: string; note: string };

export class ReconcileArgsError extends Error {
  override name = "ReconcileArgsError";
}

export const RECONCILE_USAGE =
  'usage: npm run reconcile [-- --all | --since <ISO date> | resolve <finding id> --note "<what was done>"]';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A date as ISO 8601 writes it: a day, optionally a time and a zone. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export function parseReconcileArgs(args: readonly string[]): ReconcileCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        all: { type: "boolean" },
        since: { type: "string" },
        note: { type: "string" },
      },
    });
  } catch (error) {
    throw new ReconcileArgsError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals[0] === "resolve") {
    const id = positionals[1];
    if (!id || positionals.length > 2 || values.all || values.since !== undefined)
      throw new ReconcileArgsError('resolve takes one finding id and --note "<what was done>"');
    if (!UUID.test(id)) throw new ReconcileArgsError(`"${id}" is not a finding id (a UUID)`);
    const note = values.note?.trim();
    if (!note) throw new ReconcileArgsError('resolve needs --note "<what was done>"');
    return { kind: "resolve", id, note };
  }
  if (positionals.length > 0) throw new ReconcileArgsError(`unknown argument "${positionals[0]}"`);
  if (values.note !== undefined) throw new ReconcileArgsError("--note goes with resolve");
  if (values.all && values.since !== undefined)
    throw new ReconcileArgsError("--all and --since exclude each other");
  if (values.all) return { kind: "all" };
  if (values.since !== undefined) {
    const since = new Date(values.since);
    if (!ISO_DATE.test(values.since) || Number.isNaN(since.getTime()))
      throw new ReconcileArgsError(
        `--since needs an ISO date such as 2026-11-27 or 2026-11-27T08:00:00Z, not "${values.since}"`,
      );
    if (since.getTime() > Date.now())
      throw new ReconcileArgsError(`--since ${values.since} is in the future`);
    return { kind: "since", since };
  }
  return { kind: "run" };
}
