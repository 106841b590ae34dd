// The operator, through the admin API like a person in the dashboard: now and then busts a random
// recently completed checkout key (its next retry runs the handler again, and must answer with the
// same order) and releases every stuck lease it sees (keys whose request died with an instance).
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { exchange } from "./http";
import type { Recorder } from "./record";

const ADMIN = { authorization: "Bearer admin_demo_token" };

interface KeyRow {
  id: string;
  key: string;
  tenant: string;
}

export interface OperatorOptions {
  port: number;
  everyMs: number;
  until: number;
  random: () => number;
}

export async function runOperator(o: OperatorOptions, rec: Recorder): Promise<void> {
  while (rec.now() < o.until) {
    await sleep(o.everyMs);
    const completed = await listKeys(o.port, {
      status: "COMPLETED",
      procedure: "checkout.placeOrder",
      limit: 50,
    });
    const victim = completed[Math.floor(o.random() * completed.length)];
    if (victim && (await remove(o.port, "bust", victim)))
      rec.fault("bust", `${victim.tenant}/${victim.key}`);
    for (const stuck of (await listKeys(o.port, { stuck: true, limit: 20 })).slice(0, 5)) {
      if (await remove(o.port, "release", stuck))
        rec.fault("release", `${stuck.tenant}/${stuck.key}`);
    }
  }
}

async function listKeys(port: number, input: Record<string, unknown>): Promise<KeyRow[]> {
  const result = await exchange({
    port,
    method: "GET",
    path: `/api/trpc/admin.keys.list?input=${encodeURIComponent(JSON.stringify(input))}`,
    headers: ADMIN,
    timeoutMs: 30_000,
  });
  if (result.kind !== "answer" || result.answer.status !== 200) return []; // faults hit the operator too
  return (JSON.parse(result.answer.body) as { result: { data: { items: KeyRow[] } } }).result.data
    .items;
}

/** True when the key was removed (it may have been refused: a live lease, or already gone). */
async function remove(port: number, verb: "bust" | "release", key: KeyRow): Promise<boolean> {
  const result = await exchange({
    port,
    method: "POST",
    path: `/api/trpc/admin.keys.${verb}`,
    headers: { ...ADMIN, "content-type": "application/json", "idempotency-key": randomUUID() },
    body: JSON.stringify({ id: key.id, reason: `soak: the operator's random ${verb}` }),
    timeoutMs: 30_000,
  });
  return result.kind === "answer" && result.answer.status === 200;
}
