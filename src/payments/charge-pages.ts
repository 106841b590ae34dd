// The provider's charge list, read page by page under a run's budget (ReconcileBudget): at most so
// many pages, so many bytes a page (the body is not read past them), so much wall time (a body
// that stalls ends with it). Each page is handed to the caller and dropped: what a run holds is one
// page at a time, whatever the provider says about `has_more`. When the budget runs out the
// listing ends cleanly, says why and where it stopped, and the caller judges what it read.
import type { ReconcileBudget } from "./config";
import {
  ProviderPageTooLargeError,
  type ChargeListQuery,
  type ChargePage,
  type ListedCharge,
  type PaymentProvider,
} from "./provider";

/** The list API's largest page: fewer round trips per run. */
export const PAGE_SIZE = 100;

export const BudgetStop = {
  /** The run read its pages. */
  PAGES: "pages",
  /** The run's wall time ran out (a slow provider, or a body that stalled). */
  TIME: "time",
  /** A page larger than the byte cap: refused after reading no more than the cap. */
  PAGE_TOO_LARGE: "page-too-large",
} as const;
export type BudgetStop = (typeof BudgetStop)[keyof typeof BudgetStop];

export interface BudgetUse {
  pages: number;
  /** The bytes of the pages read (a refused page counts for nothing: it was not used). */
  bytes: number;
  stopped?: { reason: BudgetStop; detail: string };
}

/** One run's budget: what it has spent, and whether it may read another page. */
export class RunBudget {
  pages = 0;
  bytes = 0;
  stopped: BudgetUse["stopped"];
  /** Ends a call in flight (its body included) when the run's time is up. */
  readonly signal: AbortSignal;
  private readonly startedAt: number;

  constructor(
    readonly limits: ReconcileBudget,
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = clock();
    this.signal = AbortSignal.timeout(limits.maxRunMs);
  }

  /**
   * Why another page may not be read, or undefined when it may. `share` keeps the rest of the
   * budget back for what comes after (the lookups of orders the main list did not match).
   */
  exhausted(share = 1): BudgetStop | undefined {
    if (this.stopped?.reason === BudgetStop.PAGE_TOO_LARGE) return BudgetStop.PAGE_TOO_LARGE;
    if (this.signal.aborted || this.clock() - this.startedAt >= this.limits.maxRunMs * share)
      return BudgetStop.TIME;
    if (this.pages >= Math.max(1, Math.floor(this.limits.maxPages * share)))
      return BudgetStop.PAGES;
    return undefined;
  }

  stop(reason: BudgetStop, detail: string): void {
    // The first reason is the one that ended the run; a later pass finds it spent.
    this.stopped ??= { reason, detail };
  }

  use(): BudgetUse {
    return {
      pages: this.pages,
      bytes: this.bytes,
      ...(this.stopped ? { stopped: this.stopped } : {}),
    };
  }
}

const STOP_DETAIL: Record<Exclude<BudgetStop, "page-too-large">, (l: ReconcileBudget) => string> = {
  pages: (l) => `read its ${l.maxPages} pages of the provider's list`,
  time: (l) => `ran for its ${l.maxRunMs} ms`,
};

/** Where a listing ended: complete, or stopped after `last` (undefined: before any charge). */
export interface Listing {
  complete: boolean;
  last?: ListedCharge;
}

/**
 * One call of the list API under the budget: the page, or undefined when the budget stopped it (a
 * page too large, the run's time out, or no page left within `share`).
 */
async function readPage(
  provider: PaymentProvider,
  query: ChargeListQuery,
  budget: RunBudget,
  share = 1,
): Promise<ChargePage | undefined> {
  const spent = budget.exhausted(share);
  if (spent) {
    if (spent !== BudgetStop.PAGE_TOO_LARGE) budget.stop(spent, STOP_DETAIL[spent](budget.limits));
    return undefined;
  }
  try {
    const page = await provider.listCharges(query, {
      maxBytes: budget.limits.maxPageBytes,
      signal: budget.signal,
    });
    budget.pages += 1;
    budget.bytes += page.bytes;
    return page;
  } catch (error) {
    if (error instanceof ProviderPageTooLargeError)
      budget.stop(BudgetStop.PAGE_TOO_LARGE, error.message);
    // The run's time ran out while a call was in flight (a slow answer, a stalled body).
    else if (budget.signal.aborted) budget.stop(BudgetStop.TIME, STOP_DETAIL.time(budget.limits));
    else throw error;
    return undefined;
  }
}

/**
 * Reads the charges created in [createdGte, createdLt) page by page, oldest first, handing each
 * page to `onPage` before reading the next, until the list ends or the budget (its `share`) does.
 */
export async function eachChargePage(
  provider: PaymentProvider,
  range: { createdGte?: number; createdLt: number },
  budget: RunBudget,
  onPage: (page: readonly ListedCharge[]) => Promise<void> | void,
  share = 1,
): Promise<Listing> {
  let last: ListedCharge | undefined;
  for (;;) {
    const query = { ...range, startingAfter: last?.id, limit: PAGE_SIZE };
    const page = await readPage(provider, query, budget, share);
    if (!page) return { complete: false, last };
    if (page.data.length > 0) {
      await onPage(page.data);
      last = page.data.at(-1);
    }
    if (!page.hasMore || page.data.length === 0) return { complete: true, last };
  }
}

/**
 * The charge the provider holds under `key` (GET /v1/charges?idempotency_key=), read as a page of
 * the budget: undefined when it holds none, "spent" when the budget (or a key unknown) leaves the
 * question open.
 */
export async function lookUpByKey(
  provider: PaymentProvider,
  key: string | null,
  budget: RunBudget,
): Promise<ListedCharge | undefined | "spent"> {
  if (key === null) return "spent";
  const page = await readPage(provider, { idempotencyKey: key, limit: 1 }, budget);
  return page ? page.data[0] : "spent";
}

/** The provider's oldest charge (its list is oldest first), read as a page of the budget. */
export async function firstCharge(
  provider: PaymentProvider,
  budget: RunBudget,
): Promise<ListedCharge | undefined> {
  return (await readPage(provider, { limit: 1 }, budget))?.data[0];
}
