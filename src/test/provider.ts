// The payment provider for a test file: the real service (services/provider/main.ts) as a child
// process on a free port, with books in a database of its own on the run's PostgreSQL. Tests
// charge through its HTTP API like the shop does, and read its books directly to check what was
// really charged. It serves the shop "once" under the demo secret key, the key the tests' demo-mode
// configuration calls with (src/test/app.ts), and a second shop, "rival", for the tests that call
// as another merchant.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import {
  startProviderService,
  type ProviderService,
  type ProviderServiceOptions,
} from "../../tools/provider-service";
import { DEMO_PROVIDER_SECRET_KEY, createProviderClient, type PaymentProvider } from "@/payments";
import { admin } from "./database";

export interface ProviderChargeRow {
  id: string;
  idempotencyKey: string;
  reference: string;
  amountCents: number;
  currency: string;
  status: "SUCCEEDED" | "FAILED";
  createdAt: Date;
}

export interface ProviderEventRow {
  id: string;
  type: "charge.succeeded" | "charge.failed";
  chargeId: string;
  payload: {
    chargeId: string;
    status: string;
    reference: string;
    amountCents: number;
    currency: string;
  };
  deliveredAt: Date | null;
  attempts: number;
}

type Faults = Pick<
  ProviderServiceOptions,
  "failureRate" | "timeoutRate" | "webhook" | "duplicateRate"
>;

/** Another merchant of the same provider, with a key of its own. */
export const RIVAL_SHOP = {
  id: "rival",
  secretKey: "sk_test_rival_shop_0123456789abcdefghijklmnop",
} as const;

export interface TestProvider {
  /** The service's base URL (PAYMENTS_PROVIDER_URL): the same after stop() and start(). */
  url: string;
  /** The shop's secret key (PAYMENTS_PROVIDER_SECRET_KEY; the demo key). */
  secretKey: string;
  /** The shop's HTTP client for it. */
  client: PaymentProvider;
  databaseUrl: string;
  /** Its books, read directly. */
  sql<T extends pg.QueryResultRow>(text: string, params?: unknown[]): Promise<T[]>;
  charges(reference?: string): Promise<ProviderChargeRow[]>;
  events(chargeId: string): Promise<ProviderEventRow[]>;
  /** Stops the service (its books stay); start() brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /**
   * Another instance on the same books with other fault rates, on a port of its own; stopped with
   * the file.
   */
  withFaults(faults: Faults): Promise<{ url: string; client: PaymentProvider }>;
}

const CHARGE_COLUMNS = `id, idempotency_key AS "idempotencyKey", reference, amount_cents AS "amountCents", currency, status, created_at AS "createdAt"`;

/**
 * In a test file: `const provider = useTestProvider();`, then `provider.client` and `provider.url`
 * inside tests.
 */
export function useTestProvider(faults: Faults = {}): TestProvider {
  const name = `provider_test_${randomBytes(6).toString("hex")}`;
  const databaseUrl = () => inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);
  let books: pg.Pool | undefined;
  let main: ProviderService | undefined;
  let port = 0;
  const others: ProviderService[] = [];
  const start = async (options: Faults & { port?: number }) =>
    startProviderService({
      databaseUrl: databaseUrl(),
      secretKey: DEMO_PROVIDER_SECRET_KEY,
      otherShops: [RIVAL_SHOP],
      log: () => {},
      ...options,
    });

  const handle: TestProvider = {
    url: "",
    secretKey: DEMO_PROVIDER_SECRET_KEY,
    client: undefined as unknown as PaymentProvider,
    databaseUrl: "",
    async sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []) {
      return (await books!.query<T>(text, params)).rows;
    },
    charges: (reference) =>
      reference === undefined
        ? handle.sql<ProviderChargeRow>(
            `SELECT ${CHARGE_COLUMNS} FROM charges ORDER BY created_at, id`,
          )
        : handle.sql<ProviderChargeRow>(
            `SELECT ${CHARGE_COLUMNS} FROM charges WHERE reference = $1 ORDER BY created_at, id`,
            [reference],
          ),
    events: (chargeId) =>
      handle.sql<ProviderEventRow>(
        `SELECT id, type, charge_id AS "chargeId", payload, delivered_at AS "deliveredAt", attempts FROM events WHERE charge_id = $1 ORDER BY created_at`,
        [chargeId],
      ),
    async stop() {
      await main?.stop();
      main = undefined;
    },
    async start() {
      main = await start({ ...faults, port });
    },
    async withFaults(more) {
      const other = await start({ ...faults, ...more });
      others.push(other);
      return { url: other.url, client: createProviderClient(other.url, DEMO_PROVIDER_SECRET_KEY) };
    },
  };

  beforeAll(async () => {
    await admin((c) => c.query(`CREATE DATABASE "${name}"`));
    main = await start(faults);
    port = main.port;
    books = new pg.Pool({ connectionString: databaseUrl(), max: 2 });
    // An idle connection PostgreSQL ends (the teardown's DROP DATABASE … WITH (FORCE) can reach
    // one still closing) emits an error on the pool: with no listener it would crash the file.
    books.on("error", () => {});
    Object.assign(handle, {
      url: main.url,
      client: createProviderClient(main.url, DEMO_PROVIDER_SECRET_KEY),
      databaseUrl: databaseUrl(),
    });
  });
  afterAll(async () => {
    await Promise.all([main?.stop(), ...others.map((o) => o.stop())]);
    await books?.end();
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });
  return handle;
}
