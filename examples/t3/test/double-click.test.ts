// T3's own form, in Chromium: a double-click on Submit sends post.create twice with one key (the
// package's hook keeps one key per intent), and the server makes one post. Without the hook each
// click gets its own key, and this test fails with two posts.
import { randomUUID } from "node:crypto";
import { chromium, type Browser, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { chromiumLaunchOptions } from "../../../tools/chromium";
import { appUrl, postsNamed } from "./app";

let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch(chromiumLaunchOptions);
});
afterAll(async () => {
  await browser?.close();
});

describe("the post form", () => {
  it("makes one post from a double-click on Submit", async () => {
    const page = await browser.newPage();
    // Every post.create the page sends, until its answer arrives.
    const sent: Request[] = [];
    const inFlight = new Set<Request>();
    page.on("request", (request) => {
      if (!request.url().includes("/api/trpc/post.create")) return;
      sent.push(request);
      inFlight.add(request);
    });
    page.on("requestfinished", (request) => inFlight.delete(request));
    page.on("requestfailed", (request) => inFlight.delete(request));
    await page.goto(appUrl);
    const name = `double-click-${randomUUID()}`;
    await page.getByPlaceholder("Title").fill(name);
    // Both clicks in one task, as on a slow phone where the second lands before React has
    // disabled the button: Playwright's dblclick() leaves React time to disable it in between.
    await page
      .getByRole("button", { name: "Submit" })
      .evaluate((button: HTMLButtonElement) => {
        button.click();
        button.click();
      });
    await page.getByText(`Your most recent post: ${name}`).waitFor();
    await vi.waitFor(() => expect(inFlight.size).toBe(0));
    // Both clicks reached the server (else this test would prove nothing), and made one post.
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(await postsNamed(name)).toBe(1);
  });
});
