// Debian's Chromium, as every browser test here launches it (playwright.config.ts, the t3
// example's double-click test): Playwright's own browser download cannot work offline. No
// sandbox (CI runs as root), and no background networking on a machine without the internet.
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Playwright's launch options for it. */
export const chromiumLaunchOptions = {
  executablePath: CHROMIUM_PATH,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
};
