// Seed data: tenants acme and globex and a catalog, always; in demo mode also the demo accounts
// (an admin and a buyer per tenant) and the demo API tokens the README lists, all marked `demo` so
// that a server without demo mode refuses them even if they are in the database.
// Idempotent itself: running it twice leaves the same data (upserts on natural keys), and it never
// resets stock or orders that already exist.
import type { Db } from "../../src/server/db/client";
import { hashToken } from "../../src/server/auth/token";

export const DEMO_ACCOUNTS = [
  {
    email: "acme@example.com",
    name: "Acme buyer",
    role: "TENANT",
    tenantId: "acme",
    token: "acme_demo_token",
  },
  {
    email: "globex@example.com",
    name: "Globex buyer",
    role: "TENANT",
    tenantId: "globex",
    token: "globex_demo_token",
  },
  {
    email: "admin@example.com",
    name: "Operator",
    role: "ADMIN",
    tenantId: null,
    token: "admin_demo_token",
  },
] as const;

export const DEMO_PRODUCTS = [
  {
    sku: "MUG-001",
    name: "Enamel mug",
    description: "Holds 350 ml of coffee, survives camping.",
    priceCents: 1450,
    stock: 120,
  },
  {
    sku: "TEE-002",
    name: "Organic T-shirt",
    description: "Heavy cotton, one colour: ink.",
    priceCents: 2900,
    stock: 80,
  },
  {
    sku: "BAG-003",
    name: "Canvas tote",
    description: "Fits a laptop and a baguette.",
    priceCents: 1900,
    stock: 60,
  },
  {
    sku: "NTB-004",
    name: "Dot-grid notebook",
    description: "A5, 160 pages, lies flat.",
    priceCents: 1250,
    stock: 200,
  },
  {
    sku: "PEN-005",
    name: "Brass pen",
    description: "Refillable, heavier than it looks.",
    priceCents: 4500,
    stock: 40,
  },
  {
    sku: "CAP-006",
    name: "Wool cap",
    description: "Merino, one size.",
    priceCents: 3200,
    stock: 35,
  },
  {
    sku: "BTL-007",
    name: "Steel bottle",
    description: "750 ml, keeps cold for a day.",
    priceCents: 2700,
    stock: 90,
  },
  {
    sku: "STK-008",
    name: "Sticker pack",
    description: "Twelve vinyl stickers.",
    priceCents: 600,
    stock: 500,
  },
  {
    sku: "SOC-009",
    name: "Striped socks",
    description: "Two pairs, sizes 39–46.",
    priceCents: 1500,
    stock: 150,
  },
  {
    sku: "LMP-010",
    name: "Desk lamp",
    description: "Warm LED, dimmable. Only a few left.",
    priceCents: 8900,
    stock: 5,
  },
] as const;

export interface SeedOptions {
  /**
   * Create the demo accounts and tokens (DEMO_MODE). Without it no account exists: make one with
   * `npm run users`.
   */
  demo: boolean;
}

export async function seed(db: Db, options: SeedOptions): Promise<void> {
  for (const id of ["acme", "globex"]) {
    await db.tenant.upsert({
      where: { id },
      update: {},
      create: { id, name: id === "acme" ? "Acme Corp" : "Globex Inc" },
    });
  }
  if (options.demo) await seedDemoAccounts(db);
  for (const product of DEMO_PRODUCTS) {
    await db.product.upsert({
      where: { sku: product.sku },
      update: {},
      create: { ...product, currency: "EUR" },
    });
  }
}

/** The demo accounts (no password: one click in demo mode) and their tokens, marked `demo`. */
async function seedDemoAccounts(db: Db): Promise<void> {
  for (const account of DEMO_ACCOUNTS) {
    const user = await db.user.upsert({
      where: { email: account.email },
      update: {},
      create: {
        email: account.email,
        name: account.name,
        role: account.role,
        tenantId: account.tenantId,
        demo: true,
      },
    });
    const tokenHash = hashToken(account.token);
    await db.apiToken.upsert({
      where: { tokenHash },
      update: {},
      create: { tokenHash, label: "demo", userId: user.id, demo: true },
    });
  }
}
