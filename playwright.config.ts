// Playwright drives Debian's Chromium against the production build (`npm run build` first:
// `npm run e2e` and `npm test` do that). e2e/server.ts starts a fresh PostgreSQL and `next start`.
// One worker: the tests share that one server and database; each uses its own cart and counts
// orders by id, so they do not depend on each other. Every spec runs on a desktop screen; the shop
// specs (e2e/shop*.spec.ts) run again on a 390 × 844 phone screen.
import { defineConfig, devices } from "@playwright/test";
import { BASE_URL } from "./e2e/ports";
import { chromiumLaunchOptions } from "./tools/chromium";

export default defineConfig({
  testDir: "./e2e",
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [
    ["list"],
    ...(process.env.CI ? [["html", { open: "never" }] as const] : []),
    // `npm test` (scripts/test.ts) reads the test counts for its summary from this report.
    ...(process.env.PLAYWRIGHT_JSON_OUTPUT_FILE ? [["json"] as const] : []),
  ],
  projects: [
    { name: "desktop", use: { ...devices["Desktop Chrome"] } },
    {
      name: "phone",
      testMatch: /shop[^/]*\.spec\.ts$/,
      use: { ...devices["Desktop Chrome"], viewport: { width: 390, height: 844 } },
    },
  ],
  use: {
    baseURL: BASE_URL,
    trace: "retain-on-failure",
    launchOptions: chromiumLaunchOptions,
  },
  webServer: {
    command: "npx tsx e2e/server.ts",
    url: `${BASE_URL}/api/health`,
    reuseExistingServer: !process.env.CI,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
  },
});
