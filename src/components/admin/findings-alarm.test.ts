// The dashboard's open findings: an alarm card (red, with the kinds) while any is open, a plain
// card at 0, rendered the way the stuck-leases and reaper cards are (AlarmCount).
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AlarmCount, FindingsAlarm, openKinds } from "./alarms";

const none = {
  CHARGE_WITHOUT_ORDER: 0,
  PAID_ORDER_WITHOUT_CHARGE: 0,
  DUPLICATE_CHARGE: 0,
  AMOUNT_MISMATCH: 0,
  SHARED_INTENT: 0,
};
const render = (byKind: Record<string, number>) =>
  renderToStaticMarkup(createElement(FindingsAlarm, { byKind }));
/** The class of the card's <li>. */
const cardClass = (html: string) => /^<li class="([^"]*)"/.exec(html)?.[1];

describe("the open findings on the dashboard", () => {
  it("is an alarm while any finding is open: red like the other alarms, with the count and kinds", () => {
    const html = render({ ...none, CHARGE_WITHOUT_ORDER: 2, DUPLICATE_CHARGE: 1 });
    const stuckLeases = renderToStaticMarkup(
      createElement(AlarmCount, { alarm: true, children: "Stuck leases" }),
    );
    expect(cardClass(html)).toBe("card alert bad");
    expect(cardClass(html)).toBe(cardClass(stuckLeases));
    expect(html).toContain("<strong>3</strong>");
    expect(html).toContain("charge without order 2, duplicate charge 1");
    expect(html).toContain('aria-label="Open reconciliation findings"');
    expect(html).toContain('href="/admin/outbox#recon-heading"');
  });

  it("is a plain card at 0", () => {
    const html = render(none);
    expect(cardClass(html)).toBe("card");
    expect(html).toContain("<strong>0</strong>");
    expect(html).not.toContain("disagree");
  });

  it("names the open kinds, most first, and only those", () => {
    expect(openKinds({ ...none, AMOUNT_MISMATCH: 1, SHARED_INTENT: 4 })).toBe(
      "shared intent 4, amount mismatch 1",
    );
  });
});
