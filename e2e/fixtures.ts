// Shared helpers for the Playwright specs: sign in through the real form, talk to the API as a
// plain HTTP client (bearer tokens, tRPC's JSON wire format), and reach the test server's control
// port (stop/start PostgreSQL). Import `test` and `expect` from here.
import {
  test as base,
  expect,
  type APIRequestContext,
  type Locator,
  type Page,
} from "@playwright/test";
import { BASE_URL, CONTROL_URL } from "./ports";

export { expect };

export const ACCOUNTS = {
  acme: {
    email: "acme@example.com",
    name: "Acme buyer",
    token: "acme_demo_token",
    tenantId: "acme",
  },
  globex: {
    email: "globex@example.com",
    name: "Globex buyer",
    token: "globex_demo_token",
    tenantId: "globex",
  },
  admin: {
    email: "admin@example.com",
    name: "Operator",
    token: "admin_demo_token",
    tenantId: null,
  },
} as const;
export type AccountName = keyof typeof ACCOUNTS;

/** Signs in through the sign-in page, as a person would; lands on `next` (default: the catalog). */
export async function signIn(
  page: Page,
  account: AccountName = "acme",
  next?: string,
): Promise<void> {
  const { name } = ACCOUNTS[account];
  await page.goto(next ? `/signin?next=${encodeURIComponent(next)}` : "/signin");
  await page.getByRole("button", { name: `Sign in as ${name}` }).click();
  await expect(page.getByText(`Signed in as ${name}`)).toBeVisible();
}

/** Signs out with the header's button, as a person would; lands on the sign-in page. */
export async function signOut(page: Page): Promise<void> {
  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("button", { name: "Sign out" })
    .click();
  await expect(page).toHaveURL(/\/signin/);
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sign in" }),
  ).toBeVisible();
}

/** The header's cart link, which shows the number of items in the cart shown. */
export function cartLink(page: Page): Locator {
  return page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /^Cart/ });
}

// ---------------------------------------------------------------------------------------------
// The API, as any HTTP client sees it.

export interface ApiOrder {
  id: string;
  status: "PENDING" | "PAID" | "PAYMENT_FAILED";
  chargeId: string | null;
  totalCents: number;
  currency: string;
  createdAt: string;
  items: {
    productId: string;
    sku: string;
    name: string;
    quantity: number;
    unitPriceCents: number;
    lineTotalCents: number;
  }[];
}
export interface ApiProduct {
  id: string;
  sku: string;
  name: string;
  priceCents: number;
  currency: string;
  stock: number;
}

export class TrpcHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP ${status}: ${JSON.stringify(body)}`);
  }
}

/** A tRPC client over Playwright's `request`, authenticated with a demo bearer token. */
export class Api {
  constructor(
    private readonly request: APIRequestContext,
    private readonly token: string | null,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  async query<T>(path: string, input?: unknown): Promise<T> {
    const url = `${BASE_URL}/api/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;
    const res = await this.request.get(url, { headers: this.headers() });
    const body = (await res.json()) as { result?: { data: T } };
    if (!res.ok()) throw new TrpcHttpError(res.status(), body, res.headers());
    return body.result!.data;
  }

  /** A raw mutation: returns status, headers and body, whatever they are. */
  async mutate(path: string, input: unknown, headers: Record<string, string> = {}) {
    const res = await this.request.post(`${BASE_URL}/api/trpc/${path}`, {
      headers: this.headers({ "content-type": "application/json", ...headers }),
      data: JSON.stringify(input),
    });
    return { status: res.status(), headers: res.headers(), body: (await res.json()) as unknown };
  }

  products(): Promise<ApiProduct[]> {
    return this.query<ApiProduct[]>("catalog.list");
  }

  /** Every order of the tenant, newest first (follows the cursor). */
  async orders(): Promise<ApiOrder[]> {
    const all: ApiOrder[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await this.query<{ items: ApiOrder[]; nextCursor: string | null }>(
        "orders.list",
        { limit: 100, ...(cursor ? { cursor } : {}) },
      );
      all.push(...page.items);
      if (!page.nextCursor) return all;
      cursor = page.nextCursor;
    }
  }

  order(id: string): Promise<ApiOrder> {
    return this.query<ApiOrder>("orders.byId", { id });
  }

  /**
   * Remembers the orders that exist now; `created()` then returns the ones placed since. Tests run
   * one at a time, so "placed since" is "placed by this test".
   */
  async orderLedger() {
    const before = new Set((await this.orders()).map((o) => o.id));
    return { created: async () => (await this.orders()).filter((o) => !before.has(o.id)) };
  }
}

// ---------------------------------------------------------------------------------------------
// The test server's control port (e2e/server.ts).

export const db = {
  async stop(request: APIRequestContext) {
    const res = await request.post(`${CONTROL_URL}/db/stop`);
    expect(res.ok(), await res.text()).toBe(true);
  },
  async start(request: APIRequestContext) {
    const res = await request.post(`${CONTROL_URL}/db/start`);
    expect(res.ok(), await res.text()).toBe(true);
  },
};

// ---------------------------------------------------------------------------------------------
// Shop helpers.

/** Adds products to the (empty) cart from the catalog, by name, by clicking their buttons. */
export async function addToCart(page: Page, ...names: string[]): Promise<void> {
  if (new URL(page.url()).pathname !== "/") await page.goto("/");
  for (const [i, name] of names.entries()) {
    await page.getByRole("button", { name: `Add ${name} to cart` }).click();
    await expect(page.getByRole("link", { name: `Cart (${i + 1})` })).toBeVisible();
  }
}

/** Clicks `n` times in one synchronous burst, so a disabled state cannot hide the race. */
export async function clickBurst(button: Locator, n: number): Promise<void> {
  await button.evaluate((el, times) => {
    for (let i = 0; i < times; i++)
      el.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
  }, n);
}

/** Records every checkout request the page sends: its Idempotency-Key, and the answers. */
export function recordCheckouts(page: Page) {
  const keys: string[] = [];
  const answers: { status: number; replayed: boolean; preferenceApplied?: string }[] = [];
  const isCheckout = (url: string) => url.includes("/api/trpc/checkout.placeOrder");
  page.on("request", (r) => {
    if (isCheckout(r.url())) keys.push(r.headers()["idempotency-key"] ?? "");
  });
  page.on("response", (r) => {
    if (!isCheckout(r.url())) return;
    answers.push({
      status: r.status(),
      replayed: r.headers()["idempotent-replayed"] === "true",
      preferenceApplied: r.headers()["preference-applied"],
    });
  });
  return { keys, answers };
}

/** Opens the cart and waits until the checkout can be submitted. */
export async function openCart(page: Page): Promise<void> {
  await page.goto("/cart");
  await expect(page.getByRole("button", { name: "Place order" })).toBeEnabled();
}

/** Adds `names` to the cart and opens it, ready to place the order. */
export async function cartWith(page: Page, ...names: string[]): Promise<void> {
  await addToCart(page, ...names);
  await openCart(page);
}

/** The order id in the URL of the order page the checkout lands on. */
export async function placedOrderId(page: Page): Promise<string> {
  await expect(page).toHaveURL(/\/orders\/[0-9a-f-]{36}/);
  return new URL(page.url()).pathname.split("/").pop()!;
}

/** Waits, through the API, until the payment worker charged the order once. */
export async function expectPaid(api: Api, orderId: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const order = await api.order(orderId);
        return { status: order.status, charged: order.chargeId !== null };
      },
      { timeout: 30_000, message: `order ${orderId} gets paid by the outbox worker` },
    )
    .toEqual({ status: "PAID", charged: true });
}

export const test = base.extend<{ api: Api; anonymousApi: Api; adminApi: Api }>({
  api: async ({ request }, use) => use(new Api(request, ACCOUNTS.acme.token)),
  anonymousApi: async ({ request }, use) => use(new Api(request, null)),
  adminApi: async ({ request }, use) => use(new Api(request, ACCOUNTS.admin.token)),
});
