// What the attack specs (bursts, slow bodies) attack: the production build behind its front door,
// as `npm start` runs it, over its own embedded PostgreSQL seeded in demo mode with stock enough
// for every checkout they send. Each spec starts the instances it needs (`instance(env)`), so a
// burst can meet a quiet instance that has served nothing under load.
import { randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { test } from "@playwright/test";
import pg from "pg";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { setupDatabase } from "../tools/db/setup";
import { startNextInstance, type NextInstance } from "../tools/next/instance";

export const TOKEN = "acme_demo_token";
export const ADMIN_TOKEN = "admin_demo_token";

export interface AttackTarget {
  productId: string;
  /** The target's database, for a spec that holds a connection of its own (a lock). */
  databaseUrl: string;
  /** One statement on the target's database (one connection). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /** A production instance on a free port, with `env` added (DEMO_MODE=1, no background jobs). */
  instance(env?: Record<string, string>): Promise<NextInstance>;
  stop(): Promise<void>;
}

export async function startAttackTarget(): Promise<AttackTarget> {
  const dataDir = await makeTempDataDir("once-e2e-attack-");
  const database: EmbeddedServer = await startEmbeddedPostgres({ dataDir, persistent: false });
  await database.createDatabase("once");
  const databaseUrl = database.url("once");
  await setupDatabase(databaseUrl, () => {}, { demo: true });
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await sql.query(`UPDATE "Product" SET "stock" = 100000000`);
  const productId = (
    await sql.query<{ id: string }>(`SELECT "id" FROM "Product" WHERE "sku" = 'MUG-001'`)
  ).rows[0]!.id;
  const secret = randomBytes(24).toString("hex");
  const started: NextInstance[] = [];
  return {
    productId,
    databaseUrl,
    query: async (text, values) => (await sql.query(text, values)).rows,
    async instance(env = {}) {
      const instance = await startNextInstance({
        DATABASE_URL: databaseUrl,
        DEMO_MODE: "1",
        PAYMENTS_WEBHOOK_SECRET: secret,
        ONCE_BACKGROUND_JOBS: "0",
        NEXT_MANUAL_SIG_HANDLE: "1",
        ...env,
      });
      started.push(instance);
      return instance;
    },
    async stop() {
      for (const instance of started) await instance.stop();
      await sql.end();
      await database.stop();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}

/**
 * In a spec file: one target for the file's tests, started before them (a slow start: PostgreSQL
 * and a migrated, seeded database) and stopped after them.
 */
export function useAttackTarget(): AttackTarget {
  const target = {} as AttackTarget;
  test.beforeAll(async () => {
    test.setTimeout(180_000);
    Object.assign(target, await startAttackTarget());
  });
  test.afterAll(async () => {
    await (target as Partial<AttackTarget>).stop?.();
  });
  return target;
}

export interface Answer {
  status: number;
  reason?: string;
  replayed: boolean;
  body: string;
}

async function answerOf(res: Response): Promise<Answer> {
  const body = await res.text();
  let reason: string | undefined;
  try {
    reason = (JSON.parse(body) as { error?: { data?: { reason?: string } } }).error?.data?.reason;
  } catch {
    // not JSON: judged by its status
  }
  return {
    status: res.status,
    reason,
    replayed: res.headers.get("idempotent-replayed") === "true",
    body,
  };
}

export async function catalogRead(baseURL: string): Promise<Answer> {
  return answerOf(await fetch(`${baseURL}/api/trpc/catalog.list`));
}

export async function checkout(
  baseURL: string,
  productId: string,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(`${baseURL}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      "idempotency-key": options.key ?? randomUUID(),
      ...options.headers,
    },
    body: JSON.stringify({ items: [{ productId, quantity: 1 }] }),
  });
  return answerOf(res);
}

/** once_http_refusals_total by `stage/reason`, from /api/metrics. */
export async function refusalCounts(baseURL: string): Promise<Record<string, number>> {
  const res = await fetch(`${baseURL}/api/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const counts: Record<string, number> = {};
  for (const line of (await res.text()).split("\n")) {
    const refusal = /^once_http_refusals_total\{reason="([^"]+)",stage="([^"]+)"\} (\d+)/.exec(
      line,
    );
    if (refusal) counts[`${refusal[2]}/${refusal[1]}`] = Number(refusal[3]);
  }
  return counts;
}
